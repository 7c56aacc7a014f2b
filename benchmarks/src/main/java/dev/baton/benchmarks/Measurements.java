package dev.baton.benchmarks;

import dev.baton.benchmarks.Results.ContenderResult;
import dev.baton.benchmarks.Results.Crash;
import dev.baton.benchmarks.Results.CrashRound;
import dev.baton.benchmarks.Results.FirstLeader;
import dev.baton.benchmarks.Results.Handover;
import dev.baton.benchmarks.Results.Idle;
import dev.baton.benchmarks.Results.IdleNode;
import dev.baton.benchmarks.Results.LeaseLost;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * Runs the per-contender measurements: time to first leader, graceful handover, crash failover with
 * split brain, idle load. Every wait is bounded; a round that times out is counted as a failure and
 * the run goes on.
 */
final class Measurements {

  private final Settings settings;
  private final String runId;
  private final PrintStream progress;

  Measurements(Settings settings, String runId, PrintStream progress) {
    this.settings = settings;
    this.runId = runId;
    this.progress = progress;
  }

  /**
   * Idle load and crash failover of {@code c} on the group its handover rounds ran on, after its
   * first-leader and handover rounds (taken with its peers on the same server by {@link
   * #firstLeaders} and {@link #handovers}); closes that group.
   */
  ContenderResult run(Contender c, FirstLeaderRounds firstLeader, HandoverRounds handover) {
    ContenderResult result = new ContenderResult(c);
    if (firstLeader.error != null) {
      fail(result, "first leader", firstLeader.error);
    } else {
      result.firstLeader = firstLeader.result();
      say(
          c,
          "first leader: p50 %s ms, max %s ms (cold %s ms)",
          Stats.ms(result.firstLeader.stats().p50()),
          Stats.ms(result.firstLeader.stats().max()),
          Stats.ms(result.firstLeader.coldMillis()));
    }
    try {
      if (handover.error != null) {
        fail(result, "handover, idle and crash", handover.error);
        return result;
      }
      Group g = handover.group;
      result.handover = handover.result();
      say(
          c,
          "handover (%d rounds): p50 %s, p99 %s, max %s ms, %d failed",
          result.handover.stats().count(),
          Stats.ms(result.handover.stats().p50()),
          Stats.ms(result.handover.stats().p99()),
          Stats.ms(result.handover.stats().max()),
          result.handover.failures());
      if (!result.handover.onTheWire().isEmpty()) {
        say(c, "handover on the wire: %s", WireLog.medians(result.handover.onTheWire()));
      }
      result.idle = idle(g);
      say(c, "idle: %s", idleSummary(result.idle));
      result.crash = crash(c, g);
      say(
          c,
          "crash (%d rounds): from cut p50 %s ms, from last renewal/TTL p50 %s, split brain in %d rounds (max %s ms)",
          result.crash.rounds().size(),
          Stats.ms(result.crash.fromCut().p50()),
          Stats.fixed(result.crash.ratio(result.crash.fromRenewal().p50()), 3),
          result.crash.roundsWithSplitBrain(),
          Stats.ms(result.crash.overlap().max()));
    } catch (Exception e) {
      fail(result, "idle and crash", e);
    } finally {
      handover.close();
      result.notes.addAll(handover.problems());
    }
    return result;
  }

  private static String idleSummary(Idle idle) {
    StringBuilder b = new StringBuilder();
    for (IdleNode n : idle.nodes()) {
      b.append(n.role()).append(' ');
      if (!Double.isNaN(n.storeCallsPerSecond())) {
        b.append(Stats.fixed(n.storeCallsPerSecond(), 2)).append(" calls/s, ");
      }
      b.append(Stats.fixed(n.requestsPerSecond(), 2))
          .append(" req/s, ")
          .append(Stats.fixed(n.bytesToServerPerSecond(), 0))
          .append(" B/s; ");
    }
    return b.toString();
  }

  private void fail(ContenderResult result, String what, Exception e) {
    String message = what + " could not be measured: " + e;
    result.notes.add(message);
    progress.println("[" + result.name + "] " + message);
  }

  /**
   * First-leader rounds of contenders on one server, taken in turns (the order reversed each
   * round). They share client code (vert.x, gRPC, Jackson, JDBC) and the server's own: measured one
   * after the other, the second ran on code the first had warmed, which made fabric8's
   * LeaderElector look 9 ms faster than Baton's Kubernetes store while each alone took the same.
   */
  Map<Contender, FirstLeaderRounds> firstLeaders(List<Contender> contenders) {
    Map<Contender, FirstLeaderRounds> rounds = new LinkedHashMap<>();
    for (Contender c : contenders) {
      rounds.put(c, new FirstLeaderRounds(c));
    }
    List<FirstLeaderRounds> order = new ArrayList<>(rounds.values());
    for (int round = 0; round <= settings.warmUpRounds() + settings.firstLeaderRounds(); round++) {
      for (FirstLeaderRounds r : order) {
        if (r.error == null) {
          try {
            r.round(round);
          } catch (Exception e) {
            r.error = e;
          }
        }
      }
      Collections.reverse(order);
    }
    return rounds;
  }

  /** One contender's first-leader rounds so far. */
  final class FirstLeaderRounds {
    private final Contender contender;
    private final String slug;
    private final Timeline timeline = new Timeline();
    private final List<Double> samples = new ArrayList<>();
    private double cold = Double.NaN;
    private int failures;
    Exception error;

    private FirstLeaderRounds(Contender contender) {
      this.contender = contender;
      this.slug = slug(contender.name());
    }

    /** From building the node (client and store) to its onElected, on a fresh election. */
    private void round(int round) throws Exception {
      String id = slug + "-first-" + round;
      long t0 = System.nanoTime();
      Node n = contender.newNode(election(slug, "first-" + round), id, timeline);
      try {
        n.start();
        Optional<Timeline.Event> e = timeline.awaitElected(id::equals, t0, patience(contender));
        if (e.isEmpty()) {
          failures++;
          return;
        }
        double ms = (e.get().nanos() - t0) / 1e6;
        if (round == 0) {
          cold = ms; // the first in this JVM for this library: class loading and warm-up, reported
          // apart
        } else if (round > settings.warmUpRounds()) {
          samples.add(ms);
        }
        n.leave();
      } finally {
        n.close();
      }
    }

    FirstLeader result() {
      return new FirstLeader(Stats.of(samples), cold, failures);
    }
  }

  /**
   * How long to wait for a leader of {@code c}: three of its leases and five seconds, at least the
   * run's.
   */
  private Duration patience(Contender c) {
    Duration own = c.leaseDuration().multipliedBy(3).plusSeconds(5);
    return own.compareTo(settings.patience()) > 0 ? own : settings.patience();
  }

  /**
   * Handover rounds of contenders on one server, taken in turns as {@link #firstLeaders} are: each
   * contender campaigns in a group of its own, all groups at once, and one round of each follows
   * another (the order reversed each round). Measured one contender after the other, the second ran
   * on the client and server code the first had warmed, with the JIT compiler no longer busy beside
   * it: one run each way on 28 November 2026 put Curator's LeaderLatch at 1.8 ms p50 after Baton's
   * ZooKeeper store and at 2.7 ms before it, and Baton's at 2.9 ms first and 2.3 ms second. The
   * groups stay up for {@link #run}, which closes each; the caller closes any left. How many rounds
   * are counted is {@link Settings#moreHandoverRounds}'s to say. etcd's fsyncs are read around each
   * round, so that each contender is given those of its own rounds.
   */
  Map<Contender, HandoverRounds> handovers(
      List<Contender> contenders, Supplier<Optional<EtcdServer.WalFsyncs>> walFsyncs) {
    Map<Contender, HandoverRounds> rounds = new LinkedHashMap<>();
    for (Contender c : contenders) {
      rounds.put(c, new HandoverRounds(c, walFsyncs));
    }
    List<HandoverRounds> order = new ArrayList<>(rounds.values());
    long countedSince = 0;
    for (int round = 0; ; round++) {
      int counted = round - settings.warmUpRounds();
      if (counted == 0) {
        countedSince = System.nanoTime();
      } else if (counted > 0
          && !settings.moreHandoverRounds(
              counted, Duration.ofNanos(System.nanoTime() - countedSince))) {
        break;
      }
      for (HandoverRounds r : order) {
        if (r.error == null) {
          try {
            r.round(counted >= 0);
          } catch (Exception e) {
            r.error = e;
          }
        }
      }
      Collections.reverse(order);
    }
    return rounds;
  }

  /** One contender's group and its handover rounds so far. */
  final class HandoverRounds implements AutoCloseable {
    private final Contender contender;
    private final List<Double> samples = new ArrayList<>();
    private final List<WireLog.Split> onTheWire = new ArrayList<>();
    private final Supplier<Optional<EtcdServer.WalFsyncs>> walFsyncs;
    private int failures;
    Group group;
    Exception error;

    /** etcd's fsyncs during this contender's rounds, when etcd runs. */
    EtcdServer.WalFsyncs fsyncs = EtcdServer.WalFsyncs.NONE;

    private HandoverRounds(Contender c, Supplier<Optional<EtcdServer.WalFsyncs>> walFsyncs) {
      this.contender = c;
      this.walFsyncs = walFsyncs;
      String slug = slug(c.name());
      try {
        group = Group.start(c, election(slug, "group"), slug, settings.candidates());
        group.awaitSingleLeader(patience(c));
      } catch (Exception e) {
        error = e;
      }
    }

    /** The leader leaves; from its close() to the next leader's onElected. */
    private void round(boolean counted) throws Exception {
      Group g = group;
      Node leader = g.awaitSingleLeader(patience(contender));
      Optional<EtcdServer.WalFsyncs> before = walFsyncs.get();
      long t0 = System.nanoTime();
      leader.leave();
      Optional<Timeline.Event> next =
          g.timeline().awaitElected(id -> !id.equals(leader.id), t0, patience(contender));
      if (next.isPresent()) {
        if (counted) {
          samples.add((next.get().nanos() - t0) / 1e6);
          onTheWire(g, leader, next.get(), t0).ifPresent(onTheWire::add);
        }
      } else {
        failures++;
      }
      g.replace(leader);
      if (before.isPresent()) {
        fsyncs = fsyncs.plus(walFsyncs.get().orElseThrow().since(before.get()));
      }
    }

    Handover result() {
      return new Handover(Stats.of(samples), failures, onTheWire);
    }

    List<String> problems() {
      return group == null ? List.of() : group.problems();
    }

    @Override
    public void close() {
      if (group != null) {
        group.close();
      }
    }
  }

  /** The round taken apart message by message, where both nodes' messages are logged. */
  private static Optional<WireLog.Split> onTheWire(
      Group g, Node leaver, Timeline.Event elected, long closeNanos) {
    Optional<WireLog> next =
        g.nodes().stream().filter(n -> n.id.equals(elected.node())).findFirst().flatMap(Node::wire);
    if (leaver.wire().isEmpty() || next.isEmpty()) {
      return Optional.empty();
    }
    return WireLog.handover(leaver.wire().get(), next.get(), closeNanos, elected.nanos());
  }

  Idle idle(Group g) {
    Node leader = g.awaitSingleLeader(settings.patience());
    Pause.of(settings.retryPeriod().multipliedBy(2).plusSeconds(1));
    List<Node> order = new ArrayList<>();
    order.add(leader);
    g.nodes().stream().filter(n -> n != leader).forEach(order::add);
    long[] calls = new long[order.size()];
    long[] requests = new long[order.size()];
    long[] toServer = new long[order.size()];
    long[] toClient = new long[order.size()];
    for (int i = 0; i < order.size(); i++) {
      calls[i] = order.get(i).storeCalls().orElse(-1);
      requests[i] = order.get(i).requestsSent();
      toServer[i] = order.get(i).bytesToServer();
      toClient[i] = order.get(i).bytesToClient();
    }
    long t0 = System.nanoTime();
    Pause.of(settings.idleWindow());
    double seconds = (System.nanoTime() - t0) / 1e9;
    List<IdleNode> nodes = new ArrayList<>();
    for (int i = 0; i < order.size(); i++) {
      Node n = order.get(i);
      long r = n.requestsSent();
      long c = n.storeCalls().orElse(-1);
      nodes.add(
          new IdleNode(
              i == 0 ? "leader" : "follower " + i,
              c < 0 || calls[i] < 0 ? Double.NaN : (c - calls[i]) / seconds,
              r < 0 || requests[i] < 0 ? Double.NaN : (r - requests[i]) / seconds,
              n.hasNetwork() ? (n.bytesToServer() - toServer[i]) / seconds : Double.NaN,
              n.hasNetwork() ? (n.bytesToClient() - toClient[i]) / seconds : Double.NaN));
    }
    return new Idle(nodes, settings.idleWindow());
  }

  Crash crash(Contender c, Group g) throws Exception {
    List<CrashRound> rounds = new ArrayList<>();
    int failures = 0;
    // Long enough to see a leader that steps down late; one that still leads a lease after its
    // successor took over is shown as "at least" that.
    Duration observe = c.leaseDuration();
    for (int round = 0; round < settings.crashRounds(); round++) {
      Node leader = g.awaitSingleLeader(patience(c));
      BeliefSampler belief = BeliefSampler.start(leader);
      try {
        long cut = System.nanoTime();
        leader.link().cut();
        Optional<Timeline.Event> next =
            g.timeline().awaitElected(id -> !id.equals(leader.id), cut, patience(c));
        if (next.isEmpty()) {
          failures++;
          continue;
        }
        long successor = next.get().nanos();
        Pause.until(
            belief::ended,
            Duration.ofNanos(Math.max(0, successor + observe.toNanos() - System.nanoTime())));
        belief.stop();
        OptionalLong renewal = leader.lastConfirmedRenewalNanos();
        double overlap =
            belief.ended()
                ? Math.max(0, belief.endedAtNanos() - successor) / 1e6
                : observe.toMillis();
        rounds.add(
            new CrashRound(
                (successor - cut) / 1e6,
                renewal.isPresent() ? (successor - renewal.getAsLong()) / 1e6 : Double.NaN,
                overlap,
                !belief.ended()));
      } finally {
        belief.stop();
        leader.link().heal();
        g.replace(leader);
      }
    }
    return new Crash(rounds, failures, c.leaseDuration(), observe);
  }

  /**
   * The lease deleted behind the leader's back ({@link BatonContender#revoker}): from the deletion
   * to the leader's {@code onRevoked}, which comes once its work has stopped. Each round is a fresh
   * election with one candidate, and the deletion falls at a random moment between two renewals;
   * the rounds alternate between an elector that takes the store's push ({@code
   * LeaseStore.watchLease}) and one that learns only from its renewals.
   */
  LeaseLost leaseLost(BatonContender c) throws Exception {
    BatonContender.Revoker revoker = c.revoker().orElseThrow();
    String slug = slug(c.name());
    List<Double> pushed = new ArrayList<>();
    List<Double> polled = new ArrayList<>();
    int failures = 0;
    Timeline timeline = new Timeline();
    // Connects the revoker's own client outside the timed rounds.
    revoker.revoke(election(slug, "lost-warm-up"));
    for (int round = 0; round < 2 * settings.crashRounds(); round++) {
      boolean push = round % 2 == 0;
      String id = slug + "-lost-" + round;
      Node n = c.newNode(election(slug, "lost-" + round), id, timeline, push);
      try {
        long started = System.nanoTime();
        n.start();
        if (timeline.awaitElected(id::equals, started, patience(c)).isEmpty()) {
          failures++;
          continue;
        }
        Pause.of(
            Duration.ofNanos(
                java.util.concurrent.ThreadLocalRandom.current()
                    .nextLong(settings.retryPeriod().toNanos())));
        long t0 = System.nanoTime();
        revoker.revoke(election(slug, "lost-" + round));
        Optional<Timeline.Event> revoked = timeline.awaitRevoked(id, t0, patience(c));
        if (revoked.isEmpty()) {
          failures++;
          continue;
        }
        (push ? pushed : polled).add((revoked.get().nanos() - t0) / 1e6);
      } finally {
        n.close();
      }
    }
    return new LeaseLost(Stats.of(pushed), Stats.of(polled), failures, c.revokedHow());
  }

  private void say(Contender c, String format, Object... args) {
    progress.println("[" + c.name() + "] " + String.format(Locale.ROOT, format, args));
  }

  String election(String slug, String purpose) {
    return ("bench-" + runId + "-" + slug + "-" + purpose).toLowerCase(Locale.ROOT);
  }

  static String slug(String name) {
    return name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("(^-|-$)", "");
  }

  /**
   * Watches whether a node believes it leads, every quarter millisecond on its own thread, and
   * notes the first moment it no longer does (an upper bound of when its belief ended).
   */
  static final class BeliefSampler {
    private final Node node;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean ended;
    private volatile long endedAtNanos;

    private BeliefSampler(Node node) {
      this.node = node;
      this.thread = new Thread(this::sample, "belief-" + node.id);
      thread.setDaemon(true);
    }

    static BeliefSampler start(Node node) {
      BeliefSampler s = new BeliefSampler(node);
      s.thread.start();
      return s;
    }

    private void sample() {
      while (running && !ended) {
        if (!node.believesLeader()) {
          endedAtNanos = System.nanoTime();
          ended = true;
          return;
        }
        java.util.concurrent.locks.LockSupport.parkNanos(250_000);
      }
    }

    boolean ended() {
      return ended;
    }

    long endedAtNanos() {
      return endedAtNanos;
    }

    void stop() {
      running = false;
    }
  }
}
