package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FaultProxy;
import dev.baton.testservers.ConsulServers;
import dev.baton.testservers.ElectProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code elect run} beside its closest peer, {@code consul lock} (the same Consul binary), both on
 * their defaults on one Consul dev agent, three candidates each, every candidate reaching the agent
 * through its own fault proxy. Each candidate's command logs a heartbeat every 50 ms on the
 * machine's wall clock (the same clock for every process here). Faults, one after the other, each
 * on the current leader: SIGTERM, SIGKILL, a stop of its whole process group (SIGSTOP to the group,
 * as Ctrl-Z does) for longer than the other side's takeover, and a cut of its proxy. For each: the
 * time from the fault to the next command's start, and the longest time two commands beat at once.
 *
 * <p>elect with the suite's short timings (lease 3 s, renew deadline 2 s, retry 500 ms); consul
 * lock on its defaults: session TTL 15 s with Consul's lock delay of 15 s and the agent's
 * serfHealth check (run on demand, see {@link #consulLock}).
 */
class ElectBesideConsulLockIT {

  private static final Duration BEAT_EVERY = Duration.ofMillis(50);

  /** The suite's short timings, so that four faults take a minute, not five. */
  private static final String SHORT_LEASE =
      "election.lease-duration=3s\nelection.renew-deadline=2s\nelection.retry-period=500ms\n";

  @TempDir Path dir;

  private ConsulServers consul;
  private final List<FaultProxy> proxies = new ArrayList<>();
  private final Map<String, ElectProcess> candidates = new LinkedHashMap<>();

  /** Each candidate's current proxy: a restarted candidate gets a new one. */
  private final Map<String, FaultProxy> proxyOf = new LinkedHashMap<>();

  private final List<ElectProcess> all = new ArrayList<>();
  private String command;

  @BeforeEach
  void start() {
    consul = ConsulServers.dev();
    command =
        script(
            "beat.sh",
            "echo \"$CAND start $$ $(date +%s%N)\" >> events.txt\n"
                + "while :; do echo \"$CAND beat $$ $(date +%s%N)\" >> events.txt; sleep 0.05; done");
  }

  @AfterEach
  void stopAll() {
    all.forEach(ElectProcess::close);
    // consul lock leaves its child running when it is killed: stop every command by its pid.
    for (Event e : events()) {
      ProcessHandle.of(e.pid()).ifPresent(ProcessHandle::destroyForcibly);
    }
    proxies.forEach(FaultProxy::close);
    if (consul != null) {
      consul.close();
    }
  }

  @Test
  void electOnConsul() {
    String election = "elect-" + UUID.randomUUID().toString().substring(0, 8);
    Map<String, Figure> figures =
        measure(
            (label, proxy) -> {
              String config =
                  file(
                          label + ".properties",
                          "election.backend=consul\nelection.consul.url=http://127.0.0.1:"
                              + proxy.port()
                              + "\n"
                              + SHORT_LEASE)
                      .toString();
              return ElectProcess.start(
                  dir,
                  label,
                  Map.of("CAND", label, "ELECTION_CANDIDATE_ID", label),
                  "run",
                  "--config",
                  config,
                  "--name",
                  election,
                  "--",
                  command);
            });
    report("elect run (lease 3 s, renew deadline 2 s)", figures);
    assertThat(figures.get("SIGSTOP of its process group").overlapMillis())
        .as("elect's guard stops the command at the renew deadline")
        .isZero();
    assertThat(figures.get("SIGTERM").overlapMillis()).isZero();
    assertThat(figures.get("SIGKILL").overlapMillis()).isZero();
    assertThat(figures.get("proxy cut").overlapMillis()).isZero();
  }

  /**
   * A measurement, not a check of Baton's (consul lock's defaults cost about five minutes here), so
   * it runs on demand: {@code mvn -pl election-cli -am verify -Dit.test=ElectBesideConsulLockIT
   * -Dbaton.compare=true}.
   */
  @Test
  @EnabledIfSystemProperty(named = "baton.compare", matches = "true")
  void consulLock() {
    String prefix = "locks/lock-" + UUID.randomUUID().toString().substring(0, 8);
    Path consulBinary = ConsulServers.binary().orElseThrow();
    Map<String, Figure> figures =
        measure(
            (label, proxy) ->
                ElectProcess.launch(
                    dir,
                    label,
                    Map.of("CAND", label),
                    List.of(
                        consulBinary.toString(),
                        "lock",
                        "-http-addr=127.0.0.1:" + proxy.port(),
                        prefix,
                        command)));
    report("consul lock (session TTL 15 s, lock delay 15 s)", figures);
    assertThat(figures).containsKeys("SIGTERM", "SIGKILL", "SIGSTOP of its process group");
  }

  private FaultProxy proxy() {
    FaultProxy proxy = FaultProxy.start(consul.agent(0).httpAddress());
    proxies.add(proxy);
    return proxy;
  }

  /** What one fault cost: the fault to the next command's start, and the longest overlap. */
  record Figure(long nextStartMillis, long overlapMillis, boolean oldStillRan) {}

  private Map<String, Figure> measure(BiFunction<String, FaultProxy, ElectProcess> starter) {
    for (String label : List.of("c1", "c2", "c3")) {
      start(label, starter);
    }
    Map<String, Figure> figures = new LinkedHashMap<>();
    figures.put("SIGTERM", round(starter, leader -> candidates.get(leader).signal("TERM"), null));
    figures.put("SIGKILL", round(starter, leader -> candidates.get(leader).signal("KILL"), null));
    figures.put(
        "SIGSTOP of its process group",
        round(
            starter,
            leader -> candidates.get(leader).signalGroup("STOP"),
            leader -> candidates.get(leader).signalGroup("CONT")));
    figures.put(
        "proxy cut",
        round(starter, leader -> proxyOf.get(leader).cut(), leader -> proxyOf.get(leader).heal()));
    return figures;
  }

  private void start(String label, BiFunction<String, FaultProxy, ElectProcess> starter) {
    FaultProxy proxy = proxy();
    proxyOf.put(label, proxy);
    ElectProcess p = starter.apply(label, proxy);
    candidates.put(label, p);
    all.add(p);
  }

  /**
   * Applies {@code fault} to the current leader, waits until another command starts (and, for a
   * fault that is undone, two seconds more, then undoes it and lets the old one's side react), and
   * measures. Starts a candidate that is gone again, for the next round.
   */
  private Figure round(
      BiFunction<String, FaultProxy, ElectProcess> starter,
      java.util.function.Consumer<String> fault,
      java.util.function.Consumer<String> undo) {
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
                        .filter(e -> !e.label().equals(leading.label()) || e.pid() != leading.pid())
                        .findFirst(),
                Optional::isPresent)
            .orElseThrow();
    if (undo != null) {
      undo.accept(leading.label());
    }
    // Long enough for a resumed or reconnected old side to notice and stop its command.
    long settleUntil = nowNanos() + Duration.ofSeconds(20).toNanos();
    await("the round settling")
        .atMost(Duration.ofSeconds(30))
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
      start(leading.label(), starter);
    }
    Figure figure =
        new Figure((next.nanos() - faultAt) / 1_000_000, overlap / 1_000_000, oldStillRan);
    System.out.printf("[ElectBesideConsulLockIT] round on %s: %s%n", leading.label(), figure);
    return figure;
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

  record Event(String label, String kind, long pid, long nanos) {}

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
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  private static void report(String tool, Map<String, Figure> figures) {
    figures.forEach(
        (fault, f) ->
            System.out.printf(
                "[ElectBesideConsulLockIT] %s: %s -> next command after %d ms, two commands at once"
                    + " for %d ms%s%n",
                tool,
                fault,
                f.nextStartMillis(),
                f.overlapMillis(),
                f.oldStillRan() ? " (and the old one still ran 20 s after the next began)" : ""));
  }

  private Path file(String name, String text) {
    try {
      return Files.writeString(dir.resolve(name), text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String script(String name, String body) {
    Path p = file(name, "#!/bin/sh\n" + body + "\n");
    try {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p.toString();
  }
}
