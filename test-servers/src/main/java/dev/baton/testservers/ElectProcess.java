package dev.baton.testservers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One real {@code elect} process, started from the shaded jar in its own process group and session
 * (so that a test can pause its whole group), with its output recorded line by line on the
 * monotonic clock this JVM shares with every other process on the machine.
 *
 * <p>In test-servers so that election-cli's process tests and the benchmarks (which run {@code
 * elect} beside {@code consul lock}) start and signal processes the same way.
 */
public final class ElectProcess implements AutoCloseable {

  public static final Path JAR =
      Path.of(System.getProperty("elect.jar", "target/elect.jar")).toAbsolutePath();
  public static final List<String> JVM =
      List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx128m", "-Xshare:auto");

  public record Line(long nanos, String text) {}

  public final String label;
  private final Process process;
  private final List<Line> lines = new ArrayList<>();
  private final Thread reader;
  private volatile List<ProcessHandle> knownTree = List.of();

  private ElectProcess(String label, Process process, Path logFile) {
    this.label = label;
    this.process = process;
    this.reader = new Thread(() -> read(logFile), "output-" + label);
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts {@code elect args...} in {@code dir}. setpriv kills it should this test JVM die before
   * it could clean up; setsid makes it the leader of its own process group, as a shell makes a job
   * (so that a test can signal that group as a terminal would, without reaching this JVM). The
   * signals the tests send (SIGINT, SIGTERM, SIGHUP, SIGTSTP) start at their defaults: a background
   * job of a script (the suite started with {@code nohup ... &}) starts with SIGINT and SIGHUP
   * ignored, everything it starts inherits that, and a JVM started with a signal ignored keeps
   * ignoring it, as elect is right to.
   */
  public static ElectProcess start(
      Path dir, String label, Map<String, String> env, String... args) {
    return start(dir, label, env, false, args);
  }

  /**
   * As {@link #start(Path, String, Map, String...)}; with {@code underNohup}, elect starts with
   * SIGHUP ignored, as {@code nohup} and some service managers start programs.
   */
  public static ElectProcess start(
      Path dir, String label, Map<String, String> env, boolean underNohup, String... args) {
    return launch(dir, label, env, javaJar(underNohup, args));
  }

  /** {@code java -jar elect.jar args...}, under {@code nohup} if asked. */
  private static List<String> javaJar(boolean underNohup, String... args) {
    List<String> argv = new ArrayList<>();
    if (underNohup) {
      argv.add("nohup");
    }
    argv.add("java");
    argv.addAll(JVM);
    argv.add("-jar");
    argv.add(JAR.toString());
    argv.addAll(List.of(args));
    return argv;
  }

  /**
   * Starts {@code command} (elect's jar, or a launcher such as an unpacked {@code bin/elect}) as
   * {@link #start(Path, String, Map, String...)} starts elect; {@code env} is put over this JVM's
   * environment less its {@code ELECTION_*} variables, and its {@code PATH} is the one {@code
   * setsid}, {@code env} and {@code command} are looked up on.
   */
  public static ElectProcess launch(
      Path dir, String label, Map<String, String> env, List<String> command) {
    List<String> argv =
        new ArrayList<>(
            List.of(
                "setpriv",
                "--pdeathsig",
                "KILL",
                "--",
                "setsid",
                "env",
                "--default-signal=INT,TERM,HUP,TSTP,TTOU"));
    argv.addAll(command);
    ProcessBuilder builder =
        new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true);
    builder.environment().keySet().removeIf(k -> k.startsWith("ELECTION_"));
    builder.environment().putAll(env);
    try {
      return new ElectProcess(label, builder.start(), dir.resolve(label + ".log"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + String.join(" ", command), e);
    }
  }

  /** Runs {@code elect args...} to the end; returns its exit status and output. */
  public static Finished runToEnd(Path dir, Duration timeout, String... args) {
    return runToEnd(dir, timeout, Map.of(), javaJar(false, args));
  }

  /** Runs {@code command} to the end, as {@link #launch} starts it; its exit status and output. */
  public static Finished runToEnd(
      Path dir, Duration timeout, Map<String, String> env, List<String> command) {
    String label = "elect-" + System.nanoTime();
    try (ElectProcess p = launch(dir, label, env, command)) {
      int status =
          p.waitFor(timeout)
              .orElseThrow(
                  () ->
                      new AssertionError(
                          String.join(" ", command) + " did not finish within " + timeout));
      p.reader.join(TimeUnit.SECONDS.toMillis(5));
      return new Finished(status, p.output());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  public record Finished(int status, String output) {}

  private void read(Path logFile) {
    try (BufferedReader in =
            new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        PrintWriter log = new PrintWriter(Files.newBufferedWriter(logFile), true)) {
      String line;
      while ((line = in.readLine()) != null) {
        long now = System.nanoTime();
        synchronized (lines) {
          lines.add(new Line(now, line));
        }
        log.println(line);
      }
    } catch (IOException e) {
      synchronized (lines) {
        lines.add(new Line(System.nanoTime(), "[test: output unreadable: " + e + "]"));
      }
    }
  }

  public long pid() {
    return process.pid();
  }

  public ProcessHandle handle() {
    return process.toHandle();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public List<Line> lines() {
    synchronized (lines) {
      return List.copyOf(lines);
    }
  }

  public String output() {
    StringBuilder b = new StringBuilder();
    lines().forEach(l -> b.append(l.text()).append('\n'));
    return b.toString();
  }

  public Optional<Line> firstLine(long afterNanos, Predicate<String> matching) {
    return lines().stream()
        .filter(l -> l.nanos() - afterNanos >= 0 && matching.test(l.text()))
        .findFirst();
  }

  public Optional<Integer> waitFor(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)
          ? Optional.of(process.exitValue())
          : Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  /** Remembers what runs below elect now, so that cleanup finds it even after elect is gone. */
  public List<ProcessHandle> snapshotTree() {
    List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
    List<ProcessHandle> all = new ArrayList<>(knownTree);
    tree.stream().filter(h -> !all.contains(h)).forEach(all::add);
    knownTree = List.copyOf(all);
    return tree;
  }

  public void signal(String signal) {
    Procs.signal(signal, pid());
  }

  /** Signals elect's whole process group, as a terminal or {@code kill -SIG -PGID} does. */
  public void signalGroup(String signal) {
    Procs.signalGroups(signal, Set.of(pid()));
  }

  /** Kills elect and everything it started, by pid; resumes them first in case they were paused. */
  @Override
  public void close() {
    snapshotTree();
    List<ProcessHandle> all = new ArrayList<>(knownTree);
    all.add(process.toHandle());
    for (ProcessHandle h : all) {
      if (h.isAlive()) {
        Procs.signal("CONT", h.pid());
        h.destroyForcibly();
      }
    }
    for (ProcessHandle h : all) {
      try {
        h.onExit().get(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        // Reported by the caller's own checks when it matters; cleanup goes on.
        System.err.println("[test] process " + h.pid() + " did not exit after SIGKILL: " + e);
      }
    }
  }
}
