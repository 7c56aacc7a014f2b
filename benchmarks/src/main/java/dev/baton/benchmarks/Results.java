package dev.baton.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What was measured, as the report and the chart read it. */
final class Results {

  private Results() {}

  /** Time from building the client to the first {@code onElected}, fresh client per round. */
  record FirstLeader(Stats stats, double coldMillis, int failures) {}

  /** Leader leaves gracefully; time until another node is told it leads. */
  /**
   * @param onTheWire the counted rounds the messages show step by step (ZooKeeper and etcd nodes)
   */
  record Handover(Stats stats, int failures, List<WireLog.Split> onTheWire) {}

  /**
   * One crash round: the leader's link is cut, the leader keeps running.
   *
   * @param fromCutMillis cut → successor's onElected
   * @param fromRenewalMillis start of the leader's last confirmed renewal → successor's onElected
   *     (NaN where the library does not show its renewals)
   * @param overlapMillis how long the cut leader still believed it led after its successor was told
   *     it leads (0 when it had stopped before)
   * @param stillLeading the cut leader still believed it led when the observation ended
   */
  record CrashRound(
      double fromCutMillis, double fromRenewalMillis, double overlapMillis, boolean stillLeading) {}

  record Crash(List<CrashRound> rounds, int failures, Duration lease, Duration observedFor) {
    Stats fromCut() {
      return Stats.of(rounds.stream().map(CrashRound::fromCutMillis).toList());
    }

    Stats fromRenewal() {
      return Stats.of(
          rounds.stream()
              .map(CrashRound::fromRenewalMillis)
              .filter(v -> !Double.isNaN(v))
              .toList());
    }

    Stats overlap() {
      return Stats.of(rounds.stream().map(CrashRound::overlapMillis).toList());
    }

    long roundsWithSplitBrain() {
      return rounds.stream().filter(r -> r.overlapMillis() > 0 || r.stillLeading()).count();
    }

    long stillLeading() {
      return rounds.stream().filter(CrashRound::stillLeading).count();
    }

    /** Rounds where a successor was told it leads before the lease could have ended. */
    long beforeLeaseEnded() {
      return rounds.stream()
          .filter(
              r -> !Double.isNaN(r.fromRenewalMillis()) && r.fromRenewalMillis() < lease.toMillis())
          .count();
    }

    double ratio(double millis) {
      return millis / lease.toMillis();
    }
  }

  /** Requests and bytes per second one node sent over the idle window. */
  /**
   * @param storeCallsPerSecond LeaseStore calls per second (Baton only; NaN for peers)
   * @param requestsPerSecond requests per second as the contender counts them at the wire
   */
  /**
   * The lease deleted behind the leader's back: from the deletion to the leader's {@code onRevoked}
   * (its work stopped), with the store's push ({@code LeaseStore.watchLease}) and without it (the
   * next renewal finds it).
   */
  record LeaseLost(Stats pushed, Stats polled, int failures, String how) {}

  record IdleNode(
      String role,
      double storeCallsPerSecond,
      double requestsPerSecond,
      double bytesToServerPerSecond,
      double bytesToClientPerSecond) {}

  record Idle(List<IdleNode> nodes, Duration window) {}

  /** Everything measured for one contender; a part that failed or was not run is null. */
  static final class ContenderResult {
    final String name;
    final String library;
    final String server;
    final Map<String, String> settings;
    final String requestsCountedAs;
    final boolean baton;
    FirstLeader firstLeader;
    Handover handover;
    Crash crash;
    Idle idle;
    LeaseLost leaseLost;
    final List<String> notes = new ArrayList<>();

    /** What etcd's own metrics say of its WAL fsyncs while this contender ran; empty elsewhere. */
    String etcdFsyncs = "";

    ContenderResult(Contender c) {
      this.name = c.name();
      this.library = c.library();
      this.server = c.server();
      this.settings = c.settings();
      this.requestsCountedAs = c.requestsCountedAs();
      this.baton = c.isBaton();
    }
  }

  /**
   * One step of the scale measurement: {@code elections} elections in one process on one store.
   *
   * @param elected how many were leading when the window began
   * @param stepDowns terms that ended during the window (a renewal missed its deadline or failed)
   * @param cpuPercentOfCore the process's CPU time over the window, in percent of one core
   * @param compilerPercentOfCore the CPU time the JIT compiler's threads used in the window, in
   *     percent of one core (part of {@code cpuPercentOfCore})
   * @param collectorPercentOfCore the garbage collectors' elapsed time in the window, in percent of
   *     the window
   * @param heapMegabytes heap in use after a full GC with the elections running
   * @param heapBaselineMegabytes the same with the store open and no elections
   * @param storeCallsPerSecond LeaseStore calls the electors made per second
   * @param serverRequestsPerSecond requests per second at the server, counted as for the idle load
   * @param bytesPerSecond bytes per second to the server through the process's proxy
   * @param rampSeconds how long starting the electors took until all led
   * @param settleSeconds how long the step then waited for the JIT compiler to go quiet
   */
  record ScaleStep(
      int elections,
      int elected,
      long stepDowns,
      double cpuPercentOfCore,
      double compilerPercentOfCore,
      double collectorPercentOfCore,
      double heapMegabytes,
      double heapBaselineMegabytes,
      double storeCallsPerSecond,
      double serverRequestsPerSecond,
      double bytesPerSecond,
      double rampSeconds,
      double settleSeconds,
      String problem) {

    /**
     * The process's CPU without the JIT compiler's: what keeping the elections costs once the
     * process is warm. A fresh process still compiles gRPC and netty paths minutes after start.
     */
    double steadyPercentOfCore() {
      return Math.max(0, cpuPercentOfCore - compilerPercentOfCore);
    }
  }

  record Scale(String backend, List<ScaleStep> steps, String note) {}
}
