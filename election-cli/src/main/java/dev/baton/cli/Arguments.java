package dev.baton.cli;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What {@code elect} was asked to do, parsed and checked once; nothing is started while parsing.
 */
final class Arguments {

  static final String USAGE =
      String.join(
          "\n",
          "usage: elect run [--config FILE] [--name NAME] [--restart] [--grace DURATION] -- COMMAND [ARGS...]",
          "       elect status [--config FILE] [--name NAME] [--watch | --output text|json]",
          "       elect demo",
          "       elect help",
          "       elect --version");

  private Arguments() {}

  sealed interface Invocation permits Run, Status, Demo, Help, Version {}

  /** {@code elect run}: campaign, and run {@code command} while leader. */
  record Run(
      Optional<Path> config,
      Optional<String> name,
      boolean restart,
      Optional<Duration> grace,
      List<String> command)
      implements Invocation {
    Run {
      command = List.copyOf(command);
    }
  }

  /** How {@code elect status} prints: lines for people (the default), or one JSON object. */
  enum Output {
    TEXT,
    JSON
  }

  /**
   * {@code elect status}: who leads, once (as text or JSON) or ({@code watch}) on every change, as
   * text.
   */
  record Status(Optional<Path> config, Optional<String> name, boolean watch, Output output)
      implements Invocation {}

  /** {@code elect demo}. */
  record Demo() implements Invocation {}

  /** {@code elect help}, {@code --help}, {@code -h}. */
  record Help() implements Invocation {}

  /** {@code elect --version}, {@code elect version}. */
  record Version() implements Invocation {}

  static Invocation parse(String... args) {
    if (args.length == 0) {
      throw new UsageException("missing command; use run, status, demo, help or --version");
    }
    String sub = args[0];
    List<String> rest = List.of(args).subList(1, args.length);
    switch (sub) {
      case "run":
        return parseRun(rest);
      case "status":
        return parseStatus(rest);
      case "demo":
        if (!rest.isEmpty()) {
          throw new UsageException(
              "demo takes no arguments, but got '" + String.join(" ", rest) + "'");
        }
        return new Demo();
      case "help":
      case "--help":
      case "-h":
        return new Help();
      case "version":
      case "--version":
        if (!rest.isEmpty()) {
          throw new UsageException(
              sub + " takes no arguments, but got '" + String.join(" ", rest) + "'");
        }
        return new Version();
      default:
        throw new UsageException(
            "unknown command '" + sub + "'; use run, status, demo, help or --version");
    }
  }

  private static Run parseRun(List<String> args) {
    Optional<Path> config = Optional.empty();
    Optional<String> name = Optional.empty();
    Optional<Duration> grace = Optional.empty();
    boolean restart = false;
    int i = 0;
    while (i < args.size()) {
      String arg = args.get(i);
      if (arg.equals("--")) {
        i++;
        break;
      }
      if (!arg.startsWith("-")) {
        break; // the command begins
      }
      Option o = Option.of(arg);
      switch (o.name) {
        case "--config":
          config = Optional.of(path(o, args, i));
          break;
        case "--name":
          name = Optional.of(name(o, args, i));
          break;
        case "--grace":
          grace = Optional.of(duration("--grace", o.value(args, i)));
          break;
        case "--restart":
          o.noValue();
          restart = true;
          break;
        default:
          throw unknownOption("run", arg, "--config, --name, --restart, --grace");
      }
      i += o.consumed();
    }
    List<String> command = args.subList(i, args.size());
    if (command.isEmpty()) {
      throw new UsageException(
          "run needs a COMMAND to run while leader, after '--': elect run [options] -- COMMAND [ARGS...]");
    }
    if (command.get(0).isEmpty()) {
      throw new UsageException("COMMAND must not be empty");
    }
    return new Run(config, name, restart, grace, command);
  }

  private static Status parseStatus(List<String> args) {
    Optional<Path> config = Optional.empty();
    Optional<String> name = Optional.empty();
    boolean watch = false;
    Optional<Output> output = Optional.empty();
    int i = 0;
    while (i < args.size()) {
      String arg = args.get(i);
      Option o = Option.of(arg);
      switch (o.name) {
        case "--config":
          config = Optional.of(path(o, args, i));
          break;
        case "--name":
          name = Optional.of(name(o, args, i));
          break;
        case "--watch":
          o.noValue();
          watch = true;
          break;
        case "--output":
          output = Optional.of(output(o.value(args, i)));
          break;
        default:
          if (!arg.startsWith("-")) {
            throw new UsageException(
                "status takes no positional arguments, but got '"
                    + arg
                    + "'; name the election with --name");
          }
          throw unknownOption("status", arg, "--config, --name, --watch, --output");
      }
      i += o.consumed();
    }
    if (watch && output.orElse(Output.TEXT) != Output.TEXT) {
      throw new UsageException(
          "--output json prints the state once; it cannot be combined with --watch, which prints"
              + " one line of text per change");
    }
    return new Status(config, name, watch, output.orElse(Output.TEXT));
  }

  private static UsageException unknownOption(String sub, String arg, String accepted) {
    return new UsageException(sub + ": unknown option '" + arg + "'; accepted: " + accepted);
  }

  private static Output output(String value) {
    switch (value) {
      case "text":
        return Output.TEXT;
      case "json":
        return Output.JSON;
      default:
        throw new UsageException("--output must be text or json, but was '" + value + "'");
    }
  }

  private static Path path(Option o, List<String> args, int i) {
    String value = o.value(args, i);
    if (value.isBlank()) {
      throw new UsageException("--config must name a properties file, but was empty");
    }
    return Path.of(value);
  }

  private static String name(Option o, List<String> args, int i) {
    String value = o.value(args, i);
    if (value.isBlank()) {
      throw new UsageException("--name must not be blank, but was '" + value + "'");
    }
    return value;
  }

  /** An option as {@code --opt value} or {@code --opt=value}. */
  private static final class Option {
    final String name;
    final String inlineValue;

    private Option(String name, String inlineValue) {
      this.name = name;
      this.inlineValue = inlineValue;
    }

    static Option of(String arg) {
      int eq = arg.indexOf('=');
      return arg.startsWith("--") && eq > 0
          ? new Option(arg.substring(0, eq), arg.substring(eq + 1))
          : new Option(arg, null);
    }

    String value(List<String> args, int i) {
      if (inlineValue != null) {
        return inlineValue;
      }
      if (i + 1 >= args.size() || args.get(i + 1).equals("--")) {
        throw new UsageException(name + " needs a value");
      }
      return args.get(i + 1);
    }

    void noValue() {
      if (inlineValue != null) {
        throw new UsageException(name + " takes no value, but got '" + inlineValue + "'");
      }
    }

    /** How many arguments this option took: itself, and its value when that was separate. */
    int consumed() {
      return inlineValue == null && needsValue() ? 2 : 1;
    }

    private boolean needsValue() {
      return name.equals("--config")
          || name.equals("--name")
          || name.equals("--grace")
          || name.equals("--output");
    }
  }

  /**
   * Durations as in the configuration: {@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}, or
   * ISO-8601.
   */
  static Duration duration(String argument, String value) {
    try {
      return ElectionProperties.parseDuration(argument, value);
    } catch (ConfigurationException e) {
      throw new UsageException(e.getMessage());
    }
  }

  /**
   * The command as it may appear in elect's own log: the program and how many arguments it got, not
   * the arguments themselves, which may carry secrets.
   */
  static String program(List<String> command) {
    int args = command.size() - 1;
    return "'"
        + command.get(0)
        + "'"
        + (args == 0 ? "" : " (" + args + (args == 1 ? " argument)" : " arguments)"));
  }
}
