package dev.baton.testservers;

import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FaultProxy;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Three candidates of a command-line tool that runs a command only while it holds a lock ({@code
 * elect run}, {@code consul lock}) on one Consul agent, each reaching the agent through its own
 * fault proxy, and the current leader faulted four times, once per fault: SIGTERM, SIGKILL, a stop
 * of its whole process group (SIGSTOP to the group, as Ctrl-Z does) for longer than the takeover,
 * and a cut of its proxy. Each candidate's command logs a heartbeat every 50 ms on the machine's
 * wall clock (the same clock for every process here); for each fault: the time from the fault to
 * the next command's start, and the longest time two commands beat at once.
 *
 * <p>The benchmark report's section ({@code BesideConsulLock}, module benchmarks) and the suite's
 * check that {@code elect} never runs two commands at once ({@code ElectBesideConsulLockIT}, module
 * election-cli) both run this; it lives here so that neither module needs the other.
 */
public final class CommandTakeover implements AutoCloseable {

  /** The faults, in the order they are applied. */
  public static final List<String> FAULTS =
      List.of("SIGTERM", "SIGKILL", "SIGSTOP of its process group", "proxy cut");

  /**
   * How long a round goes on after the next command started: longer than elect's default renew
   * deadline and than a resumed {@code consul lock}'s next session check, so that an old leader
   * that goes on after its fault is undone shows as an overlap.
   */
  public static final Duration SETTLE = Duration.ofSeconds(20);

  /** What one fault on the leader cost. */
  public record Round(
      String fault, long nextStartMillis, long overlapMillis, boolean oldStillRan) {}

  /** Starts one candidate, whose agent is at {@code port} (its proxy), running {@code command}. */
  @FunctionalInterface
  public interface Launcher {
    ElectProcess start(Path dir, String label, int port, String command);
  }

  private final ConsulServers consul;
  private final Path dir;
  private final Launcher launcher;
  private final Duration settle;
  private final PrintStream progress;
  private final String command;
  private final List<FaultProxy> proxies = new ArrayList<>();
  private final Map<String, ElectProcess> candidates = new LinkedHashMap<>();

  /** Each candidate's current proxy: a restarted candidate gets a new one. */
  private final Map<String, FaultProxy> proxyOf = new LinkedHashMap<>();

  private final List<ElectProcess> all = new ArrayList<>();

  /**
   * @param dir an empty directory of its own: the events file, each candidate's output and files
   * @param settle how long a round goes on after the next command started: long enough for a
   *     resumed or reconnected old leader to notice and stop its command, so that an overlap shows
   */
  public CommandTakeover(
      ConsulServers consul, Path dir, Launcher launcher, Duration settle, PrintStream progress) {
    this.consul = consul;
    this.dir = dir;
    this.launcher = launcher;
    this.settle = settle;
    this.progress = progress;
    this.command =
        script(
            "beat.sh",
            "echo \"$CAND start $$ $(date +%s%N)\" >> events.txt\n"
                + "while :; do echo \"$CAND beat $$ $(date +%s%N)\" >> events.txt; sleep 0.05; done");
  }

  /**
   * {@code elect run} with {@code election.backend=consul} and {@code properties} (timings; empty
   * for its defaults), started from {@code electJar}, the jar election-cli builds (elect and every
   * backend in one).
   */
  public static Launcher elect(Path electJar, String properties) {
    String election = "elect-" + UUID.randomUUID().toString().substring(0, 8);
    String classPath = electJar.toAbsolutePath().toString();
    return (dir, label, port, command) -> {
      Path config =
          write(
              dir.resolve(label + ".properties"),
              "election.backend=consul\nelection.consul.url=http://127.0.0.1:"
                  + port
                  + "\n"
                  + properties);
      List<String> argv = new ArrayList<>();
      argv.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      argv.addAll(ElectProcess.JVM);
      argv.addAll(
          List.of(
              "-cp",
              classPath,
              "dev.baton.cli.Elect",
              "run",
              "--config",
              config.toString(),
              "--name",
              election,
              "--",
              command));
      return ElectProcess.launch(
          dir, label, Map.of("CAND", label, "ELECTION_CANDIDATE_ID", label), argv);
    };
  }

  /** {@code consul lock} on its defaults, from the agent's own binary. */
  public static Launcher consulLock() {
    String prefix = "locks/lock-" + UUID.randomUUID().toString().substring(0, 8);
    Path binary = ConsulServers.binary().orElseThrow();
    return (dir, label, port, command) ->
        ElectProcess.launch(
            dir,
            label,
            Map.of("CAND", label),
            List.of(binary.toString(), "lock", "-http-addr=127.0.0.1:" + port, prefix, command));
  }

  /** Starts three candidates and applies each of {@link #FAULTS} to the leader of the moment. */
  public List<Round> measure() {
    for (String label : List.of("c1", "c2", "c3")) {
      start(label);
    }
    List<Round> rounds = new ArrayList<>();
    rounds.add(round(FAULTS.get(0), l -> candidates.get(l).signal("TERM"), null));
    rounds.add(round(FAULTS.get(1), l -> candidates.get(l).signal("KILL"), null));
    rounds.add(
        round(
            FAULTS.get(2),
            l -> candidates.get(l).signalGroup("STOP"),
            l -> candidates.get(l).signalGroup("CONT")));
    rounds.add(round(FAULTS.get(3), l -> proxyOf.get(l).cut(), l -> proxyOf.get(l).heal()));
    return rounds;
  }

  private void start(String label) {
    FaultProxy proxy = FaultProxy.start(consul.agent(0).httpAddress());
    proxies.add(proxy);
    proxyOf.put(label, proxy);
    ElectProcess p = launcher.start(dir, label, proxy.port(), command);
    candidates.put(label, p);
    all.add(p);
  }

  /**
   * Applies {@code fault} to the current leader, waits until another command starts, undoes the
   * fault if it can be undone, lets the round settle, and measures. Starts a candidate that is gone
   * again, for the next round.
   */
  private Round round(String name, Consumer<String> fault, Consumer<String> undo) {
    Event leading =
        await("one command beating")
            .atMost(Duration.ofSeconds(90))
            .until(this::current, Optional::isPresent)
            .orElseThrow();
    long faultAt = nowNanos();
    fault.accept(leading.label());
    Event next =
        await("another command started after the fault on " + leading.label())
            .atMost(Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(20))
            .until(
                () ->
                    events().stream()
                        .filter(e -> e.kind().equals("start") && e.nanos() > faultAt)
                        .filter(e -> e.pid() != leading.pid())
                        .findFirst(),
                Optional::isPresent)
            .orElseThrow();
    if (undo != null) {
      undo.accept(leading.label());
    }
    long settleUntil = nowNanos() + settle.toNanos();
    await("the round settling")
        .atMost(settle.plusSeconds(10))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> nowNanos() > settleUntil);
    long overlap = overlapNanos(leading.pid(), next.pid());
    boolean oldStillRan = ProcessHandle.of(leading.pid()).map(ProcessHandle::isAlive).orElse(false);
    ElectProcess old = candidates.get(leading.label());
    // An old command still running (consul lock leaves its child behind when killed) is stopped
    // here, so that it does not count in the next round.
    ProcessHandle.of(leading.pid())
        .filter(h -> !old.isAlive())
        .ifPresent(ProcessHandle::destroyForcibly);
    if (!old.isAlive()) {
      start(leading.label());
    }
    Round round =
        new Round(name, (next.nanos() - faultAt) / 1_000_000, overlap / 1_000_000, oldStillRan);
    progress.println("[" + dir.getFileName() + "] " + round);
    return round;
  }

  /** How long the two commands both beat: from the later first beat to the earlier last one. */
  private long overlapNanos(long oldPid, long newPid) {
    List<Event> events = events();
    Optional<Long> oldLast =
        events.stream().filter(e -> e.pid() == oldPid).map(Event::nanos).max(Long::compare);
    Optional<Long> newFirst =
        events.stream().filter(e -> e.pid() == newPid).map(Event::nanos).min(Long::compare);
    if (oldLast.isEmpty() || newFirst.isEmpty()) {
      return 0;
    }
    // A beat covers the 50 ms after it: a command whose last beat came 10 ms before the other's
    // first did not overlap it by that measure.
    return Math.max(0, oldLast.get() - newFirst.get());
  }

  /** The command beating most recently, if it beat within the last second. */
  private Optional<Event> current() {
    long now = nowNanos();
    return events().stream()
        .filter(e -> e.kind().equals("beat") && now - e.nanos() < 1_000_000_000L)
        .max(Comparator.comparingLong(Event::nanos));
  }

  private record Event(String label, String kind, long pid, long nanos) {}

  private List<Event> events() {
    Path file = dir.resolve("events.txt");
    try {
      if (!Files.exists(file)) {
        return List.of();
      }
      List<Event> events = new ArrayList<>();
      for (String line : Files.readAllLines(file)) {
        String[] f = line.trim().split(" ");
        if (f.length == 4) {
          events.add(new Event(f[0], f[1], Long.parseLong(f[2]), Long.parseLong(f[3])));
        }
      }
      return events;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The wall clock in nanoseconds, as {@code date +%s%N} in the commands reads it. */
  private static long nowNanos() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** Stops every candidate, every command by its pid (consul lock leaves its child when killed). */
  @Override
  public void close() {
    all.forEach(ElectProcess::close);
    for (Event e : events()) {
      ProcessHandle.of(e.pid()).ifPresent(ProcessHandle::destroyForcibly);
    }
    proxies.forEach(FaultProxy::close);
  }

  private String script(String name, String body) {
    Path p = write(dir.resolve(name), "#!/bin/sh\n" + body + "\n");
    try {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p.toString();
  }

  private static Path write(Path file, String text) {
    try {
      return Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
