package dev.baton.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Three real {@code elect run} processes whose command is a {@link FencedWriter}, and a bounded
 * stretch of random faults against whoever leads: SIGKILL of its elect, SIGSTOP/SIGCONT of all its
 * process groups (a paused machine), restart of a killed candidate. Then the checks: accepted tokens
 * never go backwards; no two commands of different terms ran unpaused at the same time, except a
 * leader resumed after a pause until its elect stopped it (its late writes refused by the fencing);
 * no command outlived its elect; a new leader within leaseDuration + retryPeriod + an allowance
 * after every fault that should move leadership.
 */
final class Chaos {

  static final Duration LEASE = Duration.ofSeconds(3);
  static final Duration RENEW_DEADLINE = Duration.ofSeconds(2);
  static final Duration RETRY = Duration.ofMillis(500);
  static final Duration GRACE = Duration.ofMillis(500);
  /** Scheduling noise on a 2-core machine shared with other builds. */
  static final Duration ALLOWANCE = Duration.ofSeconds(2);
  /**
   * On the embedded default the database is served by one of the elect processes (H2 AUTO_SERVER):
   * when that process dies, the others' statements fail until one of them has taken over H2's lock
   * file (which alone waits 2 s) and serves the file again; with a 1 s call timeout this takes
   * several rounds of retries. Measured here: 1.3 to 8 s on top of the lease and retry period.
   */
  static final Duration H2_SERVER_MOVES = Duration.ofSeconds(10);
  /** How long an elect may take, after SIGKILL, to take its command with it. */
  static final Duration ORPHAN_BOUND = Duration.ofSeconds(2);

  private static final Pattern ELECTED = Pattern.compile("candidate '([^']+)': elected with fencing token (\\d+)");
  private static final Pattern TERM_ENDED = Pattern.compile("(?:stepping down|lost leadership|ending term) with token (\\d+)");

  private final Path dir;
  private final String label;
  private final boolean embedded;
  private final Path config;
  private final Path log;
  private final String election;
  private final long seed;
  private final Random random;
  private final long t0 = System.nanoTime();

  private final Node[] slots = new Node[3];
  private final List<Node> everyNode = new ArrayList<>();
  private final Map<String, List<long[]>> pauses = new HashMap<>();
  private final List<Fault> faults = new ArrayList<>();
  private final List<String> narration = new ArrayList<>();
  private final List<String> violations = new ArrayList<>();
  private int restarts;

  private static final class Node {
    final int slot;
    final String candidate;
    final ElectProcess process;
    boolean killed;

    Node(int slot, String candidate, ElectProcess process) {
      this.slot = slot;
      this.candidate = candidate;
      this.process = process;
    }
  }

  private record Leader(Node node, long token) {}

  /** A fault against the leader and what followed. {@code failover} is -1 when no new leader was expected or seen. */
  private record Fault(String kind, String candidate, long token, long at, long measuredFrom, boolean servedDatabase, long failover, long bound) {}

  Chaos(Path dir, String label, boolean embedded, String backendProperties, long seed) {
    this.dir = dir;
    this.label = label;
    this.embedded = embedded;
    this.seed = seed;
    this.random = new Random(seed);
    this.election = "chaos-" + Long.toHexString(seed & 0xffffff) + "-" + Long.toHexString(System.nanoTime() & 0xffff);
    this.log = dir.resolve("writer.log");
    try {
      this.config =
          Files.writeString(
              dir.resolve("chaos.properties"),
              "election.lease-duration=" + LEASE.toMillis() + "ms\nelection.renew-deadline=" + RENEW_DEADLINE.toMillis()
                  + "ms\nelection.retry-period=" + RETRY.toMillis() + "ms\n" + backendProperties);
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
      while (System.nanoTime() - end < 0) {
        Optional<Leader> leader = awaitLeader(Duration.ofSeconds(30));
        if (leader.isEmpty()) {
          violations.add(at(System.nanoTime()) + ": no leader with a writing command for 30s");
          break;
        }
        dwell(Duration.ofMillis(1000 + random.nextInt(1500)));
        if (System.nanoTime() - end >= 0) {
          break;
        }
        List<Node> dead = new ArrayList<>();
        for (Node n : slots) {
          if (n.killed) {
            dead.add(n);
          }
        }
        double r = random.nextDouble();
        if (!dead.isEmpty() && (r < 0.3 || dead.size() >= 2)) {
          Node again = dead.get(random.nextInt(dead.size()));
          restarts++;
          start(again.slot);
        } else if (r < 0.65) {
          kill(leader.get());
        } else {
          pause(leader.get(), random.nextDouble() < 0.3 ? Duration.ofMillis(1000) : Duration.ofMillis(4000 + random.nextInt(2000)));
        }
      }
    } finally {
      stopAll();
    }
    check();
    return violations;
  }

  // ---------------------------------------------------------------- processes

  private void start(int slot) {
    int generation = slots[slot] == null ? 1 : Integer.parseInt(slots[slot].candidate.replaceAll(".*-g", "")) + 1;
    String candidate = "n" + (slot + 1) + "-g" + generation;
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classes = Path.of(System.getProperty("elect.testClasses", "target/test-classes")).toAbsolutePath().toString();
    ElectProcess p =
        ElectProcess.start(
            dir,
            candidate,
            Map.of("ELECTION_CANDIDATE_ID", candidate),
            "run", "--config", config.toString(), "--name", election, "--grace", GRACE.toMillis() + "ms", "--",
            java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx32m", "-Xshare:auto", "-cp", classes, FencedWriter.class.getName(), log.toString());
    Node n = new Node(slot, candidate, p);
    slots[slot] = n;
    everyNode.add(n);
    say("start " + candidate + " (elect pid " + p.pid() + ")" + (generation > 1 ? ": restart of a killed candidate" : ""));
  }

  private void kill(Leader leader) {
    Node n = leader.node();
    List<ProcessHandle> tree = n.process.snapshotTree();
    boolean served = embedded && servesDatabase(n.process.pid());
    long at = System.nanoTime();
    n.process.signal("KILL");
    n.killed = true;
    say("SIGKILL elect of " + n.candidate + " (leader, token " + leader.token() + (served ? "; it served the H2 database" : "") + ")");
    long gone = awaitGone(n.process.handle(), tree, ORPHAN_BOUND.plusSeconds(3));
    if (gone < 0) {
      violations.add(at(at) + ": after SIGKILL of " + n.candidate + "'s elect, its command still ran " + ORPHAN_BOUND.plusSeconds(3).toMillis() + " ms later: " + tree);
    } else {
      say("  its command and guard gone after " + ms(gone - at) + " ms");
      if (gone - at > ORPHAN_BOUND.toNanos()) {
        violations.add(at(at) + ": " + n.candidate + "'s command outlived its elect by " + ms(gone - at) + " ms (bound " + ORPHAN_BOUND.toMillis() + " ms)");
      }
    }
    expectNewLeader("kill", n, leader.token(), at, at, served, gone);
  }

  private void pause(Leader leader, Duration length) {
    Node n = leader.node();
    n.process.snapshotTree();
    Set<Long> groups = Procs.groupsOfTree(n.process.handle());
    boolean served = embedded && servesDatabase(n.process.pid());
    long stopAt = System.nanoTime();
    Procs.signalGroups("STOP", groups);
    say("SIGSTOP " + n.candidate + " (leader, token " + leader.token() + "; process groups " + groups + (served ? "; it serves the H2 database" : "") + ") for "
        + length.toMillis() + " ms");
    dwell(length);
    long contAt = System.nanoTime();
    Procs.signalGroups("CONT", groups);
    pauses.computeIfAbsent(n.candidate, k -> new ArrayList<>()).add(new long[] {stopAt, contAt});
    say("SIGCONT " + n.candidate);
    if (length.compareTo(LEASE) > 0) {
      // While the server of the embedded database is paused nobody can be elected: count from the resume.
      expectNewLeader("pause", n, leader.token(), stopAt, served ? contAt : stopAt, served, -1);
    } else {
      Optional<Long> next = awaitElectedAfter(leader.token(), Duration.ofMillis(500));
      say("  short pause (under the renew deadline): " + next.map(t -> "leadership moved anyway (machine load)").orElse("leadership kept"));
      faults.add(new Fault("short pause", n.candidate, leader.token(), stopAt, stopAt, served, -1, -1));
    }
  }

  private void expectNewLeader(String kind, Node n, long token, long at, long from, boolean served, long orphansGone) {
    // A paused server of the embedded database keeps its place (counted from the resume); a killed one moves.
    boolean moves = served && kind.equals("kill");
    long bound = LEASE.plus(RETRY).plus(ALLOWANCE).plus(moves ? H2_SERVER_MOVES : Duration.ZERO).toNanos();
    Optional<long[]> next = awaitNewLeader(token, from + bound + TimeUnit.SECONDS.toNanos(20));
    if (next.isEmpty()) {
      violations.add(at(at) + ": no new leader within " + ms(bound) + " ms + 20 s after the " + kind + " of " + n.candidate);
      faults.add(new Fault(kind, n.candidate, token, at, from, served, -1, bound));
      return;
    }
    long electedAt = next.get()[1];
    long took = electedAt - from;
    say("  new leader with token " + next.get()[0] + " after " + ms(took) + " ms" + (from != at ? " from the resume" : "") + " (bound " + ms(bound) + " ms)");
    faults.add(new Fault(kind, n.candidate, token, at, from, served, took, bound));
    if (took > bound) {
      violations.add(at(at) + ": after the " + kind + " of " + n.candidate + " a new leader took " + ms(took) + " ms, more than " + ms(bound) + " ms");
    }
    if (orphansGone >= 0 && electedAt - orphansGone < 0) {
      violations.add(at(at) + ": a new leader was elected before " + n.candidate + "'s orphaned command was gone");
    }
  }

  /**
   * True when {@code pid} listens on the port that the embedded database's lock file names. H2
   * rewrites that file in place, so a read can catch it empty: read again for a while.
   */
  private boolean servesDatabase(long pid) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    Optional<Integer> port = serverPort();
    while (port.isEmpty() && System.nanoTime() - deadline < 0) {
      dwell(Duration.ofMillis(50));
      port = serverPort();
    }
    if (port.isEmpty()) {
      say("  (cannot tell whether " + pid + " serves the database, so the looser bounds apply: the lock file names no server)");
      return true;
    }
    return listensOn(pid, port.get());
  }

  private Optional<Integer> serverPort() {
    Path file = dir.resolve(".baton").resolve("elect.lock.db");
    try (var in = Files.newInputStream(file)) {
      Properties lock = new Properties();
      lock.load(in);
      String server = lock.getProperty("server", "");
      return server.contains(":") ? Optional.of(Integer.parseInt(server.substring(server.lastIndexOf(':') + 1))) : Optional.empty();
    } catch (IOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private boolean listensOn(long pid, int port) {
    try {
      String portHex = String.format(Locale.ROOT, ":%04X", port);
      List<String> inodes = new ArrayList<>();
      for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
        for (String line : Files.readAllLines(Path.of(table))) {
          String[] f = line.trim().split("\\s+");
          if (f.length > 9 && f[1].endsWith(portHex) && f[3].equals("0A")) {
            inodes.add("socket:[" + f[9] + "]");
          }
        }
      }
      try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
        return fds.anyMatch(fd -> {
          try {
            return inodes.contains(Files.readSymbolicLink(fd).toString());
          } catch (IOException e) {
            return false;
          }
        });
      }
    } catch (IOException | RuntimeException e) {
      say("  (cannot tell whether " + pid + " serves the database, so the looser bounds apply: " + e + ")");
      return true;
    }
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
        violations.add(n.candidate + "'s elect did not exit within 15 s of SIGTERM");
      }
      n.process.close();
    }
    say("stopped every elect (SIGTERM, then SIGKILL by pid for anything left)");
  }

  // ---------------------------------------------------------------- observation

  private Optional<Leader> awaitLeader(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() - deadline < 0) {
      Optional<Leader> leader = currentLeader();
      if (leader.isPresent() && WriterLog.read(log).accepted(leader.get().token())) {
        for (Node n : slots) {
          if (!n.killed) {
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
      if (n.killed || !n.process.isAlive()) {
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
        if (m.find() && Long.parseLong(m.group(2)) > token && (first == null || line.nanos() - first[1] < 0)) {
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

  // ---------------------------------------------------------------- checks

  private void check() {
    WriterLog w = WriterLog.read(log);
    violations.addAll(w.tokenViolations());
    List<String> stale = checkOverlaps(w);
    for (WriterLog.Instance i : w.instances.values()) {
      if (Procs.running(i.pid)) {
        violations.add("the command of " + i + " still runs after every elect was stopped");
      }
    }
    for (Node n : everyNode) {
      if (n.process.isAlive()) {
        violations.add(n.candidate + "'s elect still runs");
      }
    }
    report(w, stale);
  }

  /**
   * No two commands of different terms run unpaused at the same time. The one exception the
   * physics allow: a leader resumed after a pause runs until its elect notices the lost term and
   * stops it; that must happen within the grace period and the allowance, and fencing refuses its
   * late writes (checked above: accepted tokens never go backwards).
   */
  private List<String> checkOverlaps(WriterLog w) {
    List<String> stale = new ArrayList<>();
    List<WriterLog.Instance> all = new ArrayList<>(w.instances.values());
    for (int i = 0; i < all.size(); i++) {
      for (int j = i + 1; j < all.size(); j++) {
        WriterLog.Instance a = all.get(i);
        WriterLog.Instance b = all.get(j);
        if (a.token == b.token) {
          continue;
        }
        WriterLog.Instance older = a.token < b.token ? a : b;
        WriterLog.Instance newer = older == a ? b : a;
        List<long[]> both = unpaused(older, newer);
        if (both.isEmpty()) {
          continue;
        }
        long start = both.get(0)[0];
        long end = both.get(both.size() - 1)[1];
        Optional<Long> resumed =
            pauses.getOrDefault(older.candidate, List.of()).stream().map(p -> p[1]).filter(c -> c - start <= TimeUnit.MILLISECONDS.toNanos(200)).max(Long::compare);
        boolean explained = resumed.isPresent() && end - resumed.get() <= GRACE.plus(ALLOWANCE).toNanos();
        String what = older + " and " + newer + " both ran unpaused for " + ms(both.stream().mapToLong(x -> x[1] - x[0]).sum()) + " ms from " + at(start);
        if (explained) {
          long lateAccepts = older.accepts.stream().filter(t -> t - newer.first >= 0).count();
          stale.add(what + " (" + older.candidate + " resumed from a pause and was stopped " + ms(end - resumed.get()) + " ms later; accepted writes after "
              + newer.candidate + " started: " + lateAccepts + ", refused in all: " + older.refusals + ")");
        } else {
          violations.add(what);
        }
      }
    }
    return stale;
  }

  /** The intervals in which both ran and neither's node was paused. */
  private List<long[]> unpaused(WriterLog.Instance a, WriterLog.Instance b) {
    long from = Math.max(a.first, b.first);
    long to = Math.min(a.last, b.last);
    List<long[]> parts = new ArrayList<>();
    if (to - from <= 0) {
      return parts;
    }
    parts.add(new long[] {from, to});
    List<long[]> cuts = new ArrayList<>(pauses.getOrDefault(a.candidate, List.of()));
    cuts.addAll(pauses.getOrDefault(b.candidate, List.of()));
    for (long[] cut : cuts) {
      List<long[]> next = new ArrayList<>();
      for (long[] p : parts) {
        if (cut[1] - p[0] <= 0 || p[1] - cut[0] <= 0) {
          next.add(p);
          continue;
        }
        if (cut[0] - p[0] > 0) {
          next.add(new long[] {p[0], cut[0]});
        }
        if (p[1] - cut[1] > 0) {
          next.add(new long[] {cut[1], p[1]});
        }
      }
      parts = next;
    }
    parts.sort((x, y) -> Long.compare(x[0] - t0, y[0] - t0));
    return parts;
  }

  private void report(WriterLog w, List<String> stale) {
    StringBuilder r = new StringBuilder();
    r.append("\n==== chaos on ").append(label).append(": seed ").append(seed).append(" (replay with -Dchaos.seed=").append(seed).append("), election ").append(election).append('\n');
    r.append("timing: lease ").append(LEASE.toMillis()).append(" ms, renew deadline ").append(RENEW_DEADLINE.toMillis()).append(" ms, retry ").append(RETRY.toMillis())
        .append(" ms, grace ").append(GRACE.toMillis()).append(" ms; allowance ").append(ALLOWANCE.toMillis()).append(" ms")
        .append(embedded ? ", plus " + H2_SERVER_MOVES.toMillis() + " ms when the process serving the H2 database was killed" : "").append('\n');
    r.append("what happened:\n");
    narration.forEach(line -> r.append("  ").append(line).append('\n'));
    long kills = faults.stream().filter(f -> f.kind().equals("kill")).count();
    long longPauses = faults.stream().filter(f -> f.kind().equals("pause")).count();
    long shortPauses = faults.stream().filter(f -> f.kind().equals("short pause")).count();
    r.append("what was found:\n");
    r.append("  faults: ").append(kills).append(" SIGKILLs of the leader's elect, ").append(longPauses).append(" long and ").append(shortPauses)
        .append(" short SIGSTOP/SIGCONT pauses of the leader's process groups, ").append(restarts).append(" restarts\n");
    r.append("  writes: ").append(w.count("accept")).append(" accepted, ").append(w.count("refuse")).append(" refused for a stale token; commands run: ")
        .append(w.instances.size()).append('\n');
    List<String> tokenProblems = w.tokenViolations();
    r.append("  tokens: ").append(tokenProblems.isEmpty() ? "accepted tokens never went backwards and each belonged to one candidate" : tokenProblems).append('\n');
    r.append("  overlap: ").append(stale.isEmpty() ? "no two commands of different terms ever ran unpaused at the same time" : stale.size() + " resumed stale leader(s), stopped by their elect:").append('\n');
    stale.forEach(s -> r.append("    ").append(s).append('\n'));
    faults.stream().filter(f -> f.failover() >= 0).forEach(f ->
        r.append("  failover after ").append(f.kind()).append(" of ").append(f.candidate()).append(f.servedDatabase() ? " (served H2)" : "").append(": ")
            .append(ms(f.failover())).append(" ms (bound ").append(ms(f.bound())).append(" ms)\n"));
    r.append("  violations: ").append(violations.isEmpty() ? "none" : "").append('\n');
    violations.forEach(v -> r.append("    ").append(v).append('\n'));
    System.out.println(r);
  }

  // ---------------------------------------------------------------- helpers

  private void say(String what) {
    String line = at(System.nanoTime()) + "  " + what;
    narration.add(line);
    System.out.println("[chaos " + label + "] " + line);
  }

  private String at(long nanos) {
    return String.format(Locale.ROOT, "+%6.2fs", (nanos - t0) / 1e9);
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
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
