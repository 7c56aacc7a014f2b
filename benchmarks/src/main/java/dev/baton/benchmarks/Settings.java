package dev.baton.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * What a run measures and how long it takes. {@link #full()} is what {@code scripts/benchmarks}
 * runs for the report; {@link #smokeTest()} runs every measurement with tiny counts, so CI can
 * prove the harness still works without timing anything.
 *
 * @param leaseDuration the lease every contender is given (etcd and Kubernetes count whole seconds)
 * @param renewDeadline how long a leader goes on without a confirmed renewal
 * @param retryPeriod how often a leader renews and a polling follower tries
 * @param callTimeout the longest one store call may take (at most half the renew deadline)
 * @param candidates nodes per contender in the handover, crash and idle measurements
 * @param warmUpRounds rounds of first leader and of handover run, not counted, before those that
 *     are: each contender's code is then as warm as the one before it left the code it shares
 *     (gRPC, vert.x, JDBC) behind; the very first round in the JVM is reported apart
 * @param firstLeaderRounds fresh client, store and elector per round, counted
 * @param handoverRounds graceful handovers per contender, counted, at least
 * @param handoverRoundsAtMost graceful handovers per contender, counted, at most: past {@code
 *     handoverRounds}, rounds go on while those counted on the server so far took less than {@code
 *     handoverWindow}. Where a round takes a few milliseconds, the p50 of 50 rounds still moved by
 *     a tenth of a millisecond from run to run, as much as Baton's ZooKeeper store and Curator's
 *     LeaderLatch differ; where it takes a poll or fabric8's retry period, 50 take a minute.
 * @param handoverWindow how long the counted handover rounds on one server may go on past {@code
 *     handoverRounds}
 * @param crashRounds leader cut off per contender
 * @param idleWindow how long the idle load is counted
 * @param scaleSizes elections per process in the scale measurement
 * @param scaleSettleLimit the longest a scale step waits for the JIT compiler to go quiet before
 *     its window. 15 s was too short for 10,000 etcd elections: gRPC and netty code went on
 *     compiling in bursts for 16 s, and the window then counted 4 % of a core of compiling on top
 *     of 4 % of renewing. The smoke test measures nothing and waits only briefly.
 * @param scaleWindow how long each scale step is watched once all its elections lead
 * @param only contenders to run (row names, case-insensitive); empty for all
 */
record Settings(
    boolean smoke,
    Duration leaseDuration,
    Duration renewDeadline,
    Duration retryPeriod,
    Duration callTimeout,
    int candidates,
    int warmUpRounds,
    int firstLeaderRounds,
    int handoverRounds,
    int handoverRoundsAtMost,
    Duration handoverWindow,
    int crashRounds,
    Duration idleWindow,
    List<Integer> scaleSizes,
    Duration scaleSettleLimit,
    Duration scaleWindow,
    Set<String> only) {

  static Settings full() {
    return new Settings(
        false,
        Duration.ofSeconds(3),
        Duration.ofSeconds(2),
        Duration.ofSeconds(1),
        Duration.ofSeconds(1),
        3,
        10,
        10,
        50,
        250,
        Duration.ofSeconds(60),
        10,
        Duration.ofSeconds(20),
        List.of(1, 100, 1_000, 10_000),
        Duration.ofSeconds(30),
        Duration.ofSeconds(10),
        Set.of());
  }

  static Settings smokeTest() {
    return new Settings(
        true,
        Duration.ofSeconds(3),
        Duration.ofSeconds(2),
        Duration.ofSeconds(1),
        Duration.ofSeconds(1),
        3,
        1,
        1,
        2,
        2,
        Duration.ZERO,
        1,
        Duration.ofSeconds(2),
        List.of(1, 10),
        Duration.ofSeconds(3),
        Duration.ofSeconds(2),
        Set.of());
  }

  /**
   * Whether another handover round of each contender on a server follows, {@code counted} rounds
   * having been counted in {@code countedFor}.
   */
  boolean moreHandoverRounds(int counted, Duration countedFor) {
    return counted < handoverRounds
        || (counted < handoverRoundsAtMost && countedFor.compareTo(handoverWindow) < 0);
  }

  Settings onlyThese(Set<String> names) {
    return new Settings(
        smoke,
        leaseDuration,
        renewDeadline,
        retryPeriod,
        callTimeout,
        candidates,
        warmUpRounds,
        firstLeaderRounds,
        handoverRounds,
        handoverRoundsAtMost,
        handoverWindow,
        crashRounds,
        idleWindow,
        scaleSizes,
        scaleSettleLimit,
        scaleWindow,
        Set.copyOf(names));
  }

  /** The same settings with other scale sizes, to measure one size without the others. */
  Settings withScaleSizes(List<Integer> sizes) {
    return new Settings(
        smoke,
        leaseDuration,
        renewDeadline,
        retryPeriod,
        callTimeout,
        candidates,
        warmUpRounds,
        firstLeaderRounds,
        handoverRounds,
        handoverRoundsAtMost,
        handoverWindow,
        crashRounds,
        idleWindow,
        List.copyOf(sizes),
        scaleSettleLimit,
        scaleWindow,
        only);
  }

  /**
   * The same run with other elector timings: for a store that cannot grant the run's lease (Azure:
   * 15 s to 60 s).
   */
  Settings withTimings(
      Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, Duration callTimeout) {
    return new Settings(
        smoke,
        leaseDuration,
        renewDeadline,
        retryPeriod,
        callTimeout,
        candidates,
        warmUpRounds,
        firstLeaderRounds,
        handoverRounds,
        handoverRoundsAtMost,
        handoverWindow,
        crashRounds,
        idleWindow,
        scaleSizes,
        scaleSettleLimit,
        scaleWindow,
        only);
  }

  boolean includes(String contender) {
    return only.isEmpty() || only.stream().anyMatch(o -> o.equalsIgnoreCase(contender));
  }

  /** How long to wait for anything that should happen within a lease: generous, but bounded. */
  Duration patience() {
    return leaseDuration.multipliedBy(3).plusSeconds(5);
  }
}
