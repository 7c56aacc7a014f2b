package dev.baton.cli;

import dev.baton.testservers.ElectProcess;
import dev.baton.testservers.Procs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Three real {@code elect run} processes whose command is a {@link FencedWriter}, and a bounded
 * stretch of faults against whoever leads: SIGKILL and SIGTERM of its elect; SIGSTOP/SIGCONT of all
 * its process groups (a paused machine), of its elect's JVM alone (a long GC pause, a stuck JVM),
 * of elect's own process group (Ctrl-Z in a terminal, {@code kill -STOP -PGID}), and of its command
 * alone; restart of a stopped candidate. The first faults go through every kind once, in an order
 * the seed picks, however long that takes; then they are drawn at random. The checks are {@link
 * ChaosHistory}'s, and: no command outlived its elect; a new leader within leaseDuration +
 * retryPeriod + an allowance after every fault that should move leadership; none after a pause of
 * the command alone.
 */
final class Chaos {

  static final Duration LEASE = Duration.ofSeconds(3);
  static final Duration RENEW_DEADLINE = Duration.ofSeconds(2);
  static final Duration RETRY = Duration.ofMillis(500);
  static final Duration GRACE = Duration.ofMillis(500);

  /** Scheduling noise on a 2-core machine shared with other builds. */
  static final Duration ALLOWANCE = Duration.ofSeconds(2);

  /**
   * When the store is served by one of the elect processes (H2 AUTO_SERVER) and that process dies,
   * the others' statements fail until one of them has taken over H2's lock file (which alone waits
   * 2 s) and serves the file again; with a 1 s call timeout this takes several rounds of retries.
   * Measured here: 1.3 to 8 s on top of the lease and retry period.
   */
  static final Duration SERVER_MOVES = Duration.ofSeconds(10);

  /** How long an elect may take, after SIGKILL, to take its command with it. */
  static final Duration ORPHAN_BOUND = Duration.ofSeconds(2);

  private static final List<String> KINDS =
      List.of("kill", "term", "pause", "jvm pause", "elect group pause", "command pause");
  private static final Pattern ELECTED =
      Pattern.compile("candidate '([^']+)': elected with fencing token (\\d+)");
  private static final Pattern TERM_ENDED =
      Pattern.compile("(?:stepping down|lost leadership|ending (?:the )?term) with token (\\d+)");

  private final Path dir;
  private final ChaosBackend backend;
  private final Path config;
  private final Path log;
  private final String election;
  private final long seed;
  private final Random random;
  private final long t0 = System.nanoTime();
  private final ChaosHistory history;
  private final Deque<String> firstRound = new ArrayDeque<>();

  private final Node[] slots = new Node[3];
  private final List<Node> everyNode = new ArrayList<>();
  private int restarts;

  private static final class Node {
    final int slot;
    final String candidate;
    final ElectProcess process;
    boolean stopped;

    Node(int slot, String candidate, ElectProcess process) {
      this.slot = slot;
      this.candidate = candidate;
      this.process = process;
    }
  }

  private record Leader(Node node, long token) {}

  Chaos(Path dir, ChaosBackend backend, long seed) {
    this.dir = dir;
    this.backend = backend;
    this.seed = seed;
    this.random = new Random(seed);
    this.history = new ChaosHistory(t0, backend.label());
    List<String> kinds = new ArrayList<>(KINDS);
    Collections.shuffle(kinds, random);
    firstRound.addAll(kinds);
    this.election =
        "chaos-"
            + Long.toHexString(seed & 0xffffff)
            + "-"
            + Long.toHexString(System.nanoTime() & 0xffff);
    this.log = dir.resolve("writer.log");
    try {
      this.config =
          Files.writeString(
              dir.resolve("chaos.properties"),
              "election.lease-duration="
                  + LEASE.toMillis()
                  + "ms\nelection.renew-deadline="
                  + RENEW_DEADLINE.toMillis()
                  + "ms\nelection.retry-period="
                  + RETRY.toMillis()
                  + "ms\n"
                  + backend.properties());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Runs the faults for {@code length}, stops everything, and returns what was found wrong. */
  List<String> run(Duration length) {
    try {
      for (int slot = 0; slot < 3; slot++) {
        start(slot);
      }
      long end = t0 + length.toNanos();
      while (System.nanoTime() - end < 0 || !firstRound.isEmpty()) {
        Optional<Leader> leader = awaitLeader(Duration.ofSeconds(30));
        if (leader.isEmpty()) {
          history.violation(
              history.at(System.nanoTime()) + ": no leader with a writing command for 30s");
          break;
        }
        dwell(Duration.ofMillis(1000 + random.nextInt(1500)));
        if (System.nanoTime() - end >= 0 && firstRound.isEmpty()) {
          break;
        }
        List<Node> down = new ArrayList<>();
        for (Node n : slots) {
          if (n.stopped) {
            down.add(n);
          }
        }
        if (!down.isEmpty() && (random.nextDouble() < 0.3 || down.size() >= 2)) {
          Node again = down.get(random.nextInt(down.size()));
          restarts++;
          start(again.slot);
          continue;
        }
        String kind =
            firstRound.isEmpty() ? KINDS.get(random.nextInt(KINDS.size())) : firstRound.poll();
        switch (kind) {
          case "kill" -> kill(leader.get());
          case "term" -> terminate(leader.get());
          case "pause" ->
              pause(
                  leader.get(),
                  random.nextDouble() < 0.3
                      ? Duration.ofMillis(1000)
                      : Duration.ofMillis(4000 + random.nextInt(2000)));
          case "jvm pause", "elect group pause" ->
              pauseElect(leader.get(), kind, Duration.ofMillis(4000 + random.nextInt(4000)));
          default -> pauseCommand(leader.get(), Duration.ofMillis(3000 + random.nextInt(3000)));
        }
      }
    } finally {
      stopAll();
    }
    check();
    return history.violations();
  }

  // ---------------------------------------------------------------- processes

  private void start(int slot) {
    int generation =
        slots[slot] == null
            ? 1
            : Integer.parseInt(slots[slot].candidate.replaceAll(".*-g", "")) + 1;
    String candidate = "n" + (slot + 1) + "-g" + generation;
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classes =
        Path.of(System.getProperty("elect.testClasses", "target/test-classes"))
            .toAbsolutePath()
            .toString();
    ElectProcess p =
        ElectProcess.start(
            dir,
            candidate,
            Map.of("ELECTION_CANDIDATE_ID", candidate),
            "run",
            "--config",
            config.toString(),
            "--name",
            election,
            "--grace",
            GRACE.toMillis() + "ms",
            "--",
            java,
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Xmx32m",
            "-Xshare:auto",
            "-cp",
            classes,
            FencedWriter.class.getName(),
            log.toString());
    Node n = new Node(slot, candidate, p);
    slots[slot] = n;
    everyNode.add(n);
    history.say(
        "start "
            + candidate
            + " (elect pid "
            + p.pid()
            + ")"
            + (generation > 1 ? ": restart of a stopped candidate" : ""));
  }

  /** What was running when the leader's elect was sent a signal that ends it. */
  private record Ended(Node node, List<ProcessHandle> tree, boolean served, long at) {}

  private Ended signalToEnd(Leader leader, String signal) {
    Node n = leader.node();
    List<ProcessHandle> tree = n.process.snapshotTree();
    boolean served = servesStore(n.process.pid());
    long at = System.nanoTime();
    n.process.signal(signal);
    n.stopped = true;
    history.say(
        "SIG"
            + signal
            + " elect of "
            + n.candidate
            + " (leader, token "
            + leader.token()
            + (served ? "; it served the store" : "")
            + ")");
    return new Ended(n, tree, served, at);
  }

  private void kill(Leader leader) {
    Ended e = signalToEnd(leader, "KILL");
    Node n = e.node();
    List<ProcessHandle> tree = e.tree();
    boolean served = e.served();
    long at = e.at();
    long gone = awaitGone(n.process.handle(), tree, ORPHAN_BOUND.plusSeconds(3));
    if (gone < 0) {
      history.violation(
          history.at(at)
              + ": after SIGKILL of "
              + n.candidate
              + "'s elect, its command still ran "
              + ORPHAN_BOUND.plusSeconds(3).toMillis()
              + " ms later: "
              + tree);
    } else {
      history.say("  its command and guard gone after " + ms(gone - at) + " ms");
      if (gone - at > ORPHAN_BOUND.toNanos()) {
        history.violation(
            history.at(at)
                + ": "
                + n.candidate
                + "'s command outlived its elect by "
                + ms(gone - at)
                + " ms (bound "
                + ORPHAN_BOUND.toMillis()
                + " ms)");
      }
    }
    expectNewLeader("kill", n, leader.token(), at, at, served, gone);
  }

  /** SIGTERM: elect stops its command, releases, and exits 143; the next leader needs no expiry. */
  private void terminate(Leader leader) {
    Ended e = signalToEnd(leader, "TERM");
    Node n = e.node();
    long at = e.at();
    Optional<Integer> status = n.process.waitFor(Duration.ofSeconds(20));
    long gone = awaitGone(n.process.handle(), e.tree(), Duration.ofSeconds(5));
    if (status.isEmpty() || status.get() != 143 || gone < 0) {
      history.violation(
          history.at(at)
              + ": after SIGTERM "
              + n.candidate
              + "'s elect "
              + status.map(s -> "exited with " + s).orElse("did not exit within 20 s")
              + (gone < 0 ? " and its command still ran" : "")
              + " (expected 143, command gone)");
    } else {
      history.say("  elect exited 143, its command gone after " + ms(gone - at) + " ms");
    }
    // Whether the command was gone before the next one wrote is the overlap check's (the writers'
    // own clock); the time this test saw it gone comes later than the truth.
    expectNewLeader("term", n, leader.token(), at, at, e.served(), -1);
  }

  private void pause(Leader leader, Duration length) {
    Node n = leader.node();
    n.process.snapshotTree();
    boolean served = servesStore(n.process.pid());
    long stopAt = System.nanoTime();
    Set<Long> groups = Procs.stopGroupsOfTree(n.process.handle());
    // Listed once all is stopped: a command started at the moment of the pause is in it.
    Set<Long> commandGroups = Procs.commandGroups(n.process.handle());
    history.say(
        "SIGSTOP "
            + n.candidate
            + " (leader, token "
            + leader.token()
            + "; process groups "
            + groups
            + (served ? "; it serves the store" : "")
            + ") for "
            + length.toMillis()
            + " ms");
    dwell(length);
    long contAt = System.nanoTime();
    Procs.signalGroups("CONT", groups);
    boolean withCommand = !commandGroups.isEmpty();
    if (withCommand) {
      history.commandPaused(n.candidate, stopAt, contAt, true);
    }
    history.say(
        "SIGCONT "
            + n.candidate
            + (withCommand ? "" : " (its command was not running: only elect was paused)"));
    if (length.compareTo(LEASE) > 0) {
      // While the server of the store is paused nobody can be elected: count from the resume.
      expectNewLeader("pause", n, leader.token(), stopAt, served ? contAt : stopAt, served, -1);
    } else {
      Optional<Long> next = awaitElectedAfter(leader.token(), Duration.ofMillis(500));
      history.say(
          "  short pause (under the renew deadline): "
              + next.map(t -> "leadership moved anyway (machine load)").orElse("leadership kept"));
      history.fault(
          new ChaosHistory.Fault(
              "short pause", n.candidate, leader.token(), stopAt, stopAt, served, -1, -1));
    }
  }

  /**
   * SIGSTOP, longer than the lease, of elect's JVM alone ({@code jvm pause}) or of elect's whole
   * process group ({@code elect group pause}, what Ctrl-Z does to a foreground job): its command
   * goes on running, and must be stopped by its guard before anyone else can be elected (the
   * overlap check says whether it was).
   */
  private void pauseElect(Leader leader, String kind, Duration length) {
    Node n = leader.node();
    n.process.snapshotTree();
    boolean group = kind.equals("elect group pause");
    boolean served = servesStore(n.process.pid());
    long stopAt = System.nanoTime();
    if (group) {
      n.process.signalGroup("STOP");
    } else {
      n.process.signal("STOP");
    }
    history.say(
        "SIGSTOP "
            + (group ? "elect's process group" : "elect's JVM alone")
            + " of "
            + n.candidate
            + " (leader, token "
            + leader.token()
            + "; "
            + (group ? "group " : "pid ")
            + n.process.pid()
            + (served ? "; it serves the store" : "")
            + ") for "
            + length.toMillis()
            + " ms");
    dwell(length);
    long contAt = System.nanoTime();
    if (group) {
      n.process.signalGroup("CONT");
    } else {
      n.process.signal("CONT");
    }
    history.say(
        "SIGCONT " + (group ? "elect's process group" : "elect's JVM") + " of " + n.candidate);
    expectNewLeader(kind, n, leader.token(), stopAt, served ? contAt : stopAt, served, -1);
  }

  /**
   * SIGSTOP of the command's process group alone: elect goes on renewing, and nothing may change.
   */
  private void pauseCommand(Leader leader, Duration length) {
    Node n = leader.node();
    n.process.snapshotTree();
    // Not the guard's group: a guard paused with its command wakes to a deadline that passed.
    Set<Long> groups = Procs.commandGroups(n.process.handle());
    long stopAt = System.nanoTime();
    Procs.signalGroups("STOP", groups);
    history.say(
        "SIGSTOP the command alone of "
            + n.candidate
            + " (leader, token "
            + leader.token()
            + "; process groups "
            + groups
            + ") for "
            + length.toMillis()
            + " ms");
    dwell(length);
    long contAt = System.nanoTime();
    Procs.signalGroups("CONT", groups);
    history.commandPaused(n.candidate, stopAt, contAt, false);
    history.say("SIGCONT the command of " + n.candidate);
    history.fault(
        new ChaosHistory.Fault(
            "command pause", n.candidate, leader.token(), stopAt, stopAt, false, -1, -1));
    long deadline = System.nanoTime() + ALLOWANCE.plusSeconds(1).toNanos();
    while (System.nanoTime() - deadline < 0
        && WriterLog.read(log).acceptedAfter(leader.token(), contAt).isEmpty()) {
      dwell(Duration.ofMillis(50));
    }
    if (WriterLog.read(log).acceptedAfter(leader.token(), contAt).isPresent()) {
      history.say("  the command writes again with token " + leader.token() + ": leadership kept");
    } else if (termEnded(n, leader.token())) {
      history.say("  leadership moved anyway (elect's term ended: machine load)");
    } else {
      history.violation(
          history.at(stopAt)
              + ": after a pause of "
              + n.candidate
              + "'s command alone, the command did not write again though its term went on");
    }
  }

  private void expectNewLeader(
      String kind, Node n, long token, long at, long from, boolean served, long orphansGone) {
    // A store served by the process that went away takes a while to be served again.
    boolean moves = served && (kind.equals("kill") || kind.equals("term"));
    Duration base = kind.equals("term") ? RETRY : LEASE.plus(RETRY);
    long bound = base.plus(ALLOWANCE).plus(moves ? SERVER_MOVES : Duration.ZERO).toNanos();
    Optional<long[]> next = awaitNewLeader(token, from + bound + TimeUnit.SECONDS.toNanos(20));
    if (next.isEmpty()) {
      history.violation(
          history.at(at)
              + ": no new leader within "
              + ms(bound)
              + " ms + 20 s after the "
              + kind
              + " of "
              + n.candidate);
      history.fault(new ChaosHistory.Fault(kind, n.candidate, token, at, from, served, -1, bound));
      return;
    }
    long electedAt = next.get()[1];
    long took = electedAt - from;
    history.say(
        "  new leader with token "
            + next.get()[0]
            + " after "
            + ms(took)
            + " ms"
            + (from != at ? " from the resume" : "")
            + " (bound "
            + ms(bound)
            + " ms)");
    history.fault(new ChaosHistory.Fault(kind, n.candidate, token, at, from, served, took, bound));
    if (took > bound) {
      history.violation(
          history.at(at)
              + ": after the "
              + kind
              + " of "
              + n.candidate
              + " a new leader took "
              + ms(took)
              + " ms, more than "
              + ms(bound)
              + " ms");
    }
    if (orphansGone >= 0 && electedAt - orphansGone < 0) {
      history.violation(
          history.at(at)
              + ": a new leader was elected before "
              + n.candidate
              + "'s command was gone");
    }
  }

  private boolean servesStore(long pid) {
    return backend.servedByCandidate() && EmbeddedServer.serves(dir, pid, history::say);
  }

  private void stopAll() {
    for (Node n : everyNode) {
      if (n.process.isAlive()) {
        n.process.snapshotTree();
        n.process.signal("TERM");
      }
    }
    for (Node n : everyNode) {
      if (n.process.isAlive() && n.process.waitFor(Duration.ofSeconds(15)).isEmpty()) {
        history.violation(n.candidate + "'s elect did not exit within 15 s of SIGTERM");
      }
      n.process.close();
    }
    history.say("stopped every elect (SIGTERM, then SIGKILL by pid for anything left)");
  }

  // ---------------------------------------------------------------- observation

  private Optional<Leader> awaitLeader(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() - deadline < 0) {
      Optional<Leader> leader = currentLeader();
      if (leader.isPresent() && WriterLog.read(log).accepted(leader.get().token())) {
        for (Node n : slots) {
          if (!n.stopped) {
            n.process.snapshotTree();
          }
        }
        return leader;
      }
      dwell(Duration.ofMillis(100));
    }
    return Optional.empty();
  }

  /** The live node with the highest token whose term has not ended, by its own log. */
  private Optional<Leader> currentLeader() {
    Leader best = null;
    for (Node n : slots) {
      if (n.stopped || !n.process.isAlive()) {
        continue;
      }
      long open = -1;
      for (ElectProcess.Line line : n.process.lines()) {
        Matcher elected = ELECTED.matcher(line.text());
        if (elected.find()) {
          open = Long.parseLong(elected.group(2));
        }
        Matcher ended = TERM_ENDED.matcher(line.text());
        if (ended.find() && Long.parseLong(ended.group(1)) == open) {
          open = -1;
        }
      }
      if (open > 0 && (best == null || open > best.token())) {
        best = new Leader(n, open);
      }
    }
    return Optional.ofNullable(best);
  }

  /** The first election of a token above {@code token} in any elect's output: {token, nanos}. */
  private Optional<long[]> firstElectedAbove(long token) {
    long[] first = null;
    for (Node n : everyNode) {
      for (ElectProcess.Line line : n.process.lines()) {
        Matcher m = ELECTED.matcher(line.text());
        if (m.find()
            && Long.parseLong(m.group(2)) > token
            && (first == null || line.nanos() - first[1] < 0)) {
          first = new long[] {Long.parseLong(m.group(2)), line.nanos()};
        }
      }
    }
    return Optional.ofNullable(first);
  }

  private Optional<long[]> awaitNewLeader(long token, long deadline) {
    while (System.nanoTime() - deadline < 0) {
      Optional<long[]> next = firstElectedAbove(token);
      if (next.isPresent()) {
        return next;
      }
      dwell(Duration.ofMillis(50));
    }
    return Optional.empty();
  }

  private Optional<Long> awaitElectedAfter(long token, Duration wait) {
    dwell(wait);
    return firstElectedAbove(token).map(t -> t[0]);
  }

  /** When elect and everything below it stopped running; -1 if not within {@code timeout}. */
  private static long awaitGone(ProcessHandle elect, List<ProcessHandle> tree, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() - deadline < 0) {
      if (!Procs.running(elect) && tree.stream().noneMatch(Procs::running)) {
        return System.nanoTime();
      }
      dwell(Duration.ofMillis(10));
    }
    return -1;
  }

  /** Whether {@code n}'s own log says its term with {@code token} ended. */
  private static boolean termEnded(Node n, long token) {
    return n.process.lines().stream()
        .map(l -> TERM_ENDED.matcher(l.text()))
        .anyMatch(m -> m.find() && Long.parseLong(m.group(1)) == token);
  }

  // ---------------------------------------------------------------- checks

  private void check() {
    WriterLog w = WriterLog.read(log);
    w.tokenViolations().forEach(history::violation);
    List<String> stale = history.checkOverlaps(w, GRACE.plus(ALLOWANCE).toNanos());
    for (WriterLog.Instance i : w.instances.values()) {
      if (Procs.running(i.pid)) {
        history.violation("the command of " + i + " still runs after every elect was stopped");
      }
    }
    for (Node n : everyNode) {
      if (n.process.isAlive()) {
        history.violation(n.candidate + "'s elect still runs");
      }
    }
    String header =
        "\n==== chaos on "
            + backend.label()
            + ": seed "
            + seed
            + " (replay with -Dchaos.seed="
            + seed
            + "), election "
            + election
            + "\n"
            + "timing: lease "
            + LEASE.toMillis()
            + " ms, renew deadline "
            + RENEW_DEADLINE.toMillis()
            + " ms, retry "
            + RETRY.toMillis()
            + " ms, grace "
            + GRACE.toMillis()
            + " ms; allowance "
            + ALLOWANCE.toMillis()
            + " ms"
            + (backend.servedByCandidate()
                ? ", plus "
                    + SERVER_MOVES.toMillis()
                    + " ms when the process serving the store was killed or stopped"
                : "")
            + "\n";
    history.report(header, w, stale, restarts);
  }

  // ---------------------------------------------------------------- helpers

  private static long ms(long nanos) {
    return ChaosHistory.ms(nanos);
  }

  /** The chaos schedule's own pacing (how long to let things run), not a wait for a condition. */
  private static void dwell(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
