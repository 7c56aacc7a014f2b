package dev.baton.benchmarks;

import dev.baton.testservers.CommandTakeover;
import dev.baton.testservers.CommandTakeover.Round;
import dev.baton.testservers.ConsulServers;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The report's section "{@code elect} beside {@code consul lock}" (issue 41): {@link
 * CommandTakeover} for {@code elect run} and for {@code consul lock}, both on their defaults, on
 * the run's Consul dev agent. One round per fault and tool: the rounds wait out Consul's session
 * TTL (and {@code consul lock} its lock delay too), about five minutes in all.
 */
final class BesideConsulLock {

  /** The name {@code --only} selects it by. */
  static final String NAME = "consul lock";

  /** elect's defaults, as {@code elect run} documents them. */
  static final String ELECT_SETTINGS = "lease 15 s, renew deadline 10 s, retry period 2 s";

  static final String CONSUL_LOCK_SETTINGS = "session TTL 15 s, Consul's lock delay 15 s";

  /**
   * elect and every backend in one jar, as election-cli builds it; {@code scripts/benchmarks}
   * builds it beside the harness, which does not depend on election-cli (so that the test suite's
   * build need not wait for elect's tests before the harness's).
   */
  static final Path ELECT_JAR =
      Path.of(System.getProperty("baton.elect.jar", "election-cli/target/elect.jar"));

  /** One tool's rounds, or why it has none. */
  record Side(String tool, String settings, List<Round> rounds, String problem) {}

  private final List<Side> sides;

  BesideConsulLock(List<Side> sides) {
    this.sides = List.copyOf(sides);
  }

  List<Side> sides() {
    return sides;
  }

  /**
   * Runs both tools on {@code servers}' Consul agent, unless the run leaves the section out; a
   * reason it could not run goes to {@code skipped}.
   */
  static Optional<BesideConsulLock> runIfSelected(
      Settings settings, Servers servers, PrintStream progress, List<String> skipped) {
    if (!settings.includes(NAME)) {
      return Optional.empty();
    }
    if (settings.smoke()) {
      skipped.add(
          NAME
              + ": not in a smoke run (its rounds wait out Consul's 15 s TTL; the suite's"
              + " ElectBesideConsulLockIT runs elect's side on short timings)");
      return Optional.empty();
    }
    if (ConsulServers.binary().isEmpty()) {
      skipped.add(NAME + ": the consul binary is not installed (scripts/install-consul)");
      return Optional.empty();
    }
    ConsulServers consul;
    try {
      consul = servers.consul();
    } catch (RuntimeException e) {
      // As a contender whose server cannot start: named in the report, the rest of the run goes on.
      skipped.add(NAME + ": the Consul agent could not be started: " + e);
      progress.println("[" + NAME + "] the Consul agent could not be started: " + e);
      return Optional.empty();
    }
    List<Side> sides = new ArrayList<>();
    sides.add(
        Files.isRegularFile(ELECT_JAR)
            ? side(
                "`elect run`",
                ELECT_SETTINGS,
                consul,
                "elect",
                CommandTakeover.elect(ELECT_JAR, ""),
                progress)
            : new Side(
                "`elect run`",
                ELECT_SETTINGS,
                List.of(),
                "not measured: "
                    + ELECT_JAR
                    + " is not built (mvn -pl election-cli -am package -DskipTests)"));
    sides.add(
        side(
            "`consul lock`",
            CONSUL_LOCK_SETTINGS,
            consul,
            "consul-lock",
            CommandTakeover.consulLock(),
            progress));
    return Optional.of(new BesideConsulLock(sides));
  }

  private static Side side(
      String tool,
      String settings,
      ConsulServers consul,
      String dirName,
      CommandTakeover.Launcher launcher,
      PrintStream progress) {
    Path dir = tempDir(dirName);
    progress.println("[" + NAME + "] " + tool + " (" + settings + "), one round per fault");
    try (CommandTakeover run =
        new CommandTakeover(consul, dir, launcher, CommandTakeover.SETTLE, progress)) {
      return new Side(tool, settings, run.measure(), "");
    } catch (RuntimeException e) {
      progress.println("[" + NAME + "] " + tool + " could not be measured: " + e);
      return new Side(tool, settings, List.of(), "could not be measured: " + e);
    } finally {
      Files2.deleteTree(dir);
    }
  }

  private static Path tempDir(String name) {
    try {
      Path parent = Files.createTempDirectory("baton-beside-consul-lock");
      return Files.createDirectory(parent.resolve(name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The section, between the crash rounds and the lease-lost rounds. */
  String markdown() {
    StringBuilder md = new StringBuilder();
    md.append("## `elect` beside `consul lock`\n\n");
    md.append(
        "`elect run` with `election.backend=consul` and its closest peer, `consul lock PREFIX COMMAND` (the same binary as the"
            + " server), three candidates each on the run's Consul dev agent, every candidate through its own fault proxy, each `COMMAND` logging"
            + " a heartbeat every 50 ms. Both on their defaults: elect "
            + ELECT_SETTINGS
            + "; consul lock "
            + CONSUL_LOCK_SETTINGS
            + ". The current leader is faulted once per fault, one round each (every round waits out"
            + " the TTL): SIGTERM; SIGKILL; SIGSTOP of its whole process group (as Ctrl-Z does), undone once another command has"
            + " started; its proxy cut (connections closed, new ones refused), healed likewise. **Next command after** is the time from the"
            + " fault to another candidate's command starting; **two at once** is how long the old and the new command both beat, watched for "
            + CommandTakeover.SETTLE.toSeconds()
            + " s after the new one started (and the fault undone).\n\n");
    md.append("| fault on the leader |");
    for (Side s : sides) {
      md.append(" ").append(s.tool()).append(": next command after | two at once |");
    }
    md.append("\n|---|");
    sides.forEach(s -> md.append("---:|---|"));
    md.append('\n');
    for (String fault : CommandTakeover.FAULTS) {
      md.append("| ").append(fault).append(" |");
      for (Side s : sides) {
        Optional<Round> r = s.rounds().stream().filter(x -> x.fault().equals(fault)).findFirst();
        md.append(r.map(x -> " " + seconds(x.nextStartMillis())).orElse(" –"))
            .append(" |")
            .append(r.map(BesideConsulLock::overlap).orElse(" –"))
            .append(" |");
      }
      md.append('\n');
    }
    md.append('\n');
    for (Side s : sides) {
      if (!s.problem().isEmpty()) {
        md.append("- ").append(s.tool()).append(": ").append(s.problem()).append('\n');
      }
    }
    md.append(
        "- A crash costs two TTLs on both: Consul invalidates a session twice its TTL after its last renewal; `consul lock`"
            + " waits the lock delay on top. A killed `consul lock` does not stop its `COMMAND`: where the old command still ran when"
            + " the round ended, the harness killed it.\n\n");
    return md.toString();
  }

  /** A command still running when the round ended overlapped at least as long as shown. */
  private static String overlap(Round r) {
    if (r.oldStillRan()) {
      return " **≥ "
          + seconds(r.overlapMillis())
          + "** (the old command still ran, with no lock, when the round ended)";
    }
    return r.overlapMillis() == 0 ? " never" : " **" + seconds(r.overlapMillis()) + "**";
  }

  private static String seconds(long millis) {
    return millis < 1000 ? millis + " ms" : Stats.fixed(millis / 1000.0, 1) + " s";
  }
}
