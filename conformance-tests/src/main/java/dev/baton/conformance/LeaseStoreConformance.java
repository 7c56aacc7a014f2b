package dev.baton.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import dev.baton.election.Term;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The conformance suite every {@link dev.baton.election.LeaseStore} must pass. A backend extends
 * this one class and supplies its fixture; it inherits every scenario:
 *
 * <pre>{@code
 * class PostgresConformanceIT extends LeaseStoreConformance {
 *   @Override
 *   protected ConformanceFixture fixture() {
 *     return new PostgresFixture();
 *   }
 * }
 * }</pre>
 *
 * <p>The fixture is started once for the class; the scenarios run one after another with real
 * electors, a real clock and the fixture's {@link Timings}. After each scenario every elector is
 * closed and the {@link History} of its elections is checked: no overlapping terms, strictly
 * increasing tokens, no grant before another candidate's lease ran out. On a healthy machine the
 * whole suite takes about a minute with the default timings.
 */
public abstract class LeaseStoreConformance extends FailoverScenarios {

  private static final int CHURN_CYCLES = 200;
  private static final int WARM_UP_CYCLES = 10;

  /** Threads a pool may keep idle after a burst; a leak of one per cycle shows up far above it. */
  private static final int THREAD_SLACK = 8;

  /**
   * Connections per node a pool may open in a burst after the warm-up; a leak shows up far above
   * it.
   */
  private static final int CONNECTION_SLACK_PER_NODE = 2;

  @Test
  @DisplayName(
      "12 churn: 200 start and stop cycles leave no threads, connections, watches or leases behind")
  void startAndStopCyclesLeaveNothingBehind() {
    String election = newElection("s12");
    List<Node> nodes = nodes(2);
    int peakThreads = 0;
    int peakConnections = 0;
    for (int i = 0; i < WARM_UP_CYCLES; i++) {
      cycle(nodes, election, i);
      peakThreads = Math.max(peakThreads, liveThreads().size());
      peakConnections = Math.max(peakConnections, connections(nodes));
    }
    for (int i = 0; i < CHURN_CYCLES; i++) {
      cycle(nodes, election, i);
    }
    int threadBound = peakThreads + THREAD_SLACK;
    int connectionBound = peakConnections + CONNECTION_SLACK_PER_NODE * nodes.size();
    // Idle pool threads may linger for their keep-alive (30 s for the shared worker pool).
    waiting("until the threads settle", timings.patience().plusSeconds(35))
        .untilAsserted(
            () ->
                assertThat(liveThreads().size())
                    .as("live threads, by name: %s", threadsByName())
                    .isLessThanOrEqualTo(threadBound));
    waiting("until the connections settle")
        .untilAsserted(
            () ->
                assertThat(connections(nodes))
                    .as("open connections to the server")
                    .isLessThanOrEqualTo(connectionBound));
    waiting("until every watch is closed")
        .until(() -> nodes.stream().allMatch(n -> n.store().liveWatches(election) == 0));
    waiting("until the lease is free").until(() -> nodes.get(0).store().read(election).isEmpty());
    log.info(
        "s12: {} threads live after churn (warm-up peak {}), {} connections (warm-up peak {})",
        liveThreads().size(),
        peakThreads,
        connections(nodes),
        peakConnections);
  }

  /** Starts two electors and closes them again; every other cycle without waiting for a leader. */
  private void cycle(List<Node> nodes, String election, int i) {
    Candidate a = candidate(nodes.get(0), election);
    Candidate b = candidate(nodes.get(1), election);
    a.elector().start();
    b.elector().start();
    if (i % 2 == 0) {
      awaitSoleLeader(List.of(a, b));
    }
    List<Candidate> order = i % 4 < 2 ? List.of(a, b) : List.of(b, a);
    order.forEach(c -> c.elector().close());
    assertThat(order).noneMatch(c -> c.elector().isRunning());
    // close() has returned for both: nothing of theirs may still reach the store, or it could end
    // the term of the next elector with the same candidate id.
    assertThat(nodes)
        .allSatisfy(
            n ->
                assertThat(n.store().callsInFlight())
                    .as("store calls in flight on %s after close() returned (cycle %d)", n, i)
                    .isZero());
    forget(a);
    forget(b);
  }

  private static int connections(List<Node> nodes) {
    return nodes.stream().mapToInt(n -> n.faults().openConnections()).sum();
  }

  private static List<Thread> liveThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).toList();
  }

  private static Map<String, Long> threadsByName() {
    return liveThreads().stream()
        .collect(
            Collectors.groupingBy(
                t -> t.getName().replaceAll("[-#]?\\d+$", ""),
                TreeMap::new,
                Collectors.counting()));
  }

  @Test
  @DisplayName("13 concurrent fuzz: many threads hammering one lease never see two holders at once")
  void manyThreadsHammeringOneLeaseNeverSeeTwoHolders() {
    String election = newElection("s13");
    List<Node> nodes = nodes(3);
    int threads = 6;
    int targetGrants = 150;
    int leastGrants = 30;
    long safeNanos = timings.renewDeadline().toNanos();
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger mostHolders = new AtomicInteger();
    AtomicInteger grants = new AtomicInteger();
    AtomicInteger storeErrors = new AtomicInteger();
    List<String> broken = new CopyOnWriteArrayList<>();
    List<ConformanceSupport.Background> workers = new ArrayList<>();
    long started = System.nanoTime();
    for (int k = 0; k < threads; k++) {
      String id = "fuzz-" + k;
      LeaseStore store = nodes.get(k % nodes.size()).store();
      workers.add(
          background(
              id,
              running -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (running.getAsBoolean() && grants.get() < targetGrants) {
                  long t0 = System.nanoTime();
                  Acquisition a;
                  try {
                    a = store.tryAcquire(election, id, timings.leaseDuration());
                  } catch (LeaseStoreException e) {
                    storeErrors.incrementAndGet();
                    continue;
                  }
                  if (a.lease().isEmpty()) {
                    LockSupport.parkNanos(random.nextLong(500_000));
                    continue;
                  }
                  Lease lease = a.lease().get();
                  Lease held = lease;
                  // Act only while surely inside the lease, as an elector does with its deadline.
                  if (System.nanoTime() - t0 < safeNanos) {
                    int now = holders.incrementAndGet();
                    mostHolders.accumulateAndGet(now, Math::max);
                    try {
                      if (random.nextInt(4) == 0) {
                        Lease renewed = store.renew(lease);
                        if (!renewed.token().equals(lease.token())) {
                          broken.add(
                              id + " renewed token " + lease.token() + " into " + renewed.token());
                        }
                        // Its handle may have changed: the release gives back the lease as held.
                        held = renewed;
                      }
                    } catch (LeaseStoreException | LeaseLostException e) {
                      // A slow or refused renewal on a busy machine is no breach; two holders would
                      // be.
                      storeErrors.incrementAndGet();
                    } finally {
                      holders.decrementAndGet();
                    }
                  }
                  grants.incrementAndGet();
                  try {
                    store.release(held);
                  } catch (LeaseStoreException e) {
                    storeErrors.incrementAndGet();
                  }
                }
              }));
    }
    // The hammering ends at the target, or sooner on a machine too busy to get there: what the
    // scenario proves is that no two threads ever held at once, and how fast grants come is the
    // benchmarks' business. It must still have changed hands often enough to prove something.
    Duration hammerFor = timings.patience().minusSeconds(1);
    waiting("until " + targetGrants + " grants, or " + hammerFor.toSeconds() + " s of hammering")
        .until(
            () ->
                grants.get() >= targetGrants
                    || System.nanoTime() - started - hammerFor.toNanos() > 0);
    workers.forEach(ConformanceSupport.Background::close);
    long tookMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
    log.info(
        "s13: {} grants to {} threads in {} ms, {} store errors",
        grants.get(),
        threads,
        tookMillis,
        storeErrors.get());
    assertThat(mostHolders.get()).as("most holders at once").isEqualTo(1);
    assertThat(broken).isEmpty();
    assertThat(grants.get())
        .as("grants in %d ms (store errors: %d)", tookMillis, storeErrors.get())
        .isGreaterThanOrEqualTo(leastGrants);
  }

  @Test
  @DisplayName(
      "15a renewAll renews every live lease of a batch and refuses each lost one on its own, in order")
  void renewAllRenewsEveryLiveLeaseAndRefusesEachLostOneOnItsOwn() {
    List<Node> nodes = nodes(2);
    LeaseStore store = nodes.get(0).store();
    LeaseStore other = nodes.get(1).store();
    Duration ttl = timings.leaseDuration();
    assertThat(store.renewBatchLimit()).as("renewBatchLimit").isPositive();
    assertThat(store.renewAll(List.of())).as("renewAll of no leases").isEmpty();

    String expired = newElection("s15-expired");
    Lease expiredLease = granted(store.tryAcquire(expired, "s15-a", ttl));
    waiting("until the lease of " + expired + " ran out")
        .until(() -> store.read(expired).isEmpty());

    String live1 = newElection("s15-live1");
    String released = newElection("s15-released");
    String live2 = newElection("s15-live2");
    String takenOver = newElection("s15-taken-over");
    Lease live1Lease = granted(store.tryAcquire(live1, "s15-a", ttl));
    Lease releasedLease = granted(store.tryAcquire(released, "s15-a", ttl));
    Lease live2Lease = granted(store.tryAcquire(live2, "s15-a", ttl));
    Lease takenOverLease = granted(store.tryAcquire(takenOver, "s15-a", ttl));
    store.release(releasedLease);
    store.release(takenOverLease);
    Lease successor = granted(other.tryAcquire(takenOver, "s15-b", ttl));

    List<Lease> batch =
        List.of(live1Lease, releasedLease, live2Lease, takenOverLease, expiredLease);
    List<Renewal> outcomes = new ArrayList<>();
    for (int from = 0; from < batch.size(); from += store.renewBatchLimit()) {
      List<Lease> chunk =
          batch.subList(from, Math.min(batch.size(), from + store.renewBatchLimit()));
      List<Renewal> answered = store.renewAll(chunk);
      assertThat(answered)
          .as("outcomes of a renewAll of %d leases", chunk.size())
          .hasSameSizeAs(chunk);
      outcomes.addAll(answered);
    }

    for (int i : new int[] {0, 2}) {
      Lease asked = batch.get(i);
      Lease renewed =
          outcomes
              .get(i)
              .lease()
              .orElseThrow(
                  () ->
                      new AssertionError(
                          asked.election()
                              + " was not renewed: "
                              + outcomes.get(asked == live1Lease ? 0 : 2)));
      assertThat(renewed.election()).isEqualTo(asked.election());
      assertThat(renewed.token())
          .as("token of renewed %s", asked.election())
          .isEqualTo(asked.token());
      assertThat(renewed.ttl())
          .as("ttl of renewed %s", asked.election())
          .isGreaterThanOrEqualTo(ttl);
      assertThat(other.tryAcquire(asked.election(), "s15-b", ttl).isGranted())
          .as("another's acquire of renewed %s", asked.election())
          .isFalse();
    }
    for (int i : new int[] {1, 3, 4}) {
      assertThat(outcomes.get(i).failure())
          .as("outcome for %s", batch.get(i).election())
          .containsInstanceOf(LeaseLostException.class);
    }
    assertThat(store.read(takenOver))
        .as("holder of %s after the batch", takenOver)
        .map(r -> r.holder())
        .contains("s15-b");

    store.release(outcomes.get(0).lease().orElseThrow());
    store.release(outcomes.get(2).lease().orElseThrow());
    other.release(successor);
  }

  @Test
  @DisplayName(
      "15b renewAll refuses a released lease its holder was granted again under a new token, and renews the new one")
  void renewAllRefusesATermItsOwnHolderWasGrantedAgain() {
    LeaseStore store = node("node-1").store();
    Duration ttl = timings.leaseDuration();
    String regranted = newElection("s15b-regranted");
    String live = newElection("s15b-live");
    Lease old = granted(store.tryAcquire(regranted, "s15b-a", ttl));
    store.release(old);
    Lease anew = granted(store.tryAcquire(regranted, "s15b-a", ttl));
    assertThat(anew.token()).as("token of the holder's second grant").isGreaterThan(old.token());
    Lease liveLease = granted(store.tryAcquire(live, "s15b-a", ttl));

    // The stale term beside a live lease of another election, as an elector's batch would carry it.
    List<Lease> batch = List.of(liveLease, old);
    List<Renewal> outcomes = new ArrayList<>();
    for (int from = 0; from < batch.size(); from += store.renewBatchLimit()) {
      outcomes.addAll(
          store.renewAll(
              batch.subList(from, Math.min(batch.size(), from + store.renewBatchLimit()))));
    }
    assertThat(outcomes).as("outcomes of renewAll").hasSize(2);
    assertThat(outcomes.get(0).lease()).as("renewal of the live lease of %s", live).isPresent();
    assertThat(outcomes.get(1).failure())
        .as(
            "renewal of %s under token %s, released and superseded by the holder's grant of token %s",
            regranted, old.token(), anew.token())
        .containsInstanceOf(LeaseLostException.class);

    List<Renewal> current = store.renewAll(List.of(anew));
    Lease renewed =
        current
            .get(0)
            .lease()
            .orElseThrow(
                () ->
                    new AssertionError(
                        "the holder's current lease of "
                            + regranted
                            + " was not renewed: "
                            + current.get(0)));
    assertThat(renewed.token()).as("token of the renewed current lease").isEqualTo(anew.token());
    assertHeldBy(store, regranted, "s15b-a", anew.token());

    store.release(renewed);
    store.release(outcomes.get(0).lease().orElseThrow());
  }

  @Test
  @DisplayName(
      "19 one candidate id on two nodes: one leads, the other is refused naming that id and follows until the first closes, never two leaders")
  void oneCandidateIdOnTwoNodesNeverLeadsTwice() {
    String election = newElection("s19");
    String id = "s19-twin";
    List<Node> nodes = nodes(2);
    // Two processes started with one explicit id (a copied configuration, one StatefulSet ordinal
    // twice during a rollout).
    Candidate first = startAndAwaitLeading(candidate(nodes.get(0), id, election));
    Term term = first.toldTerm().orElseThrow();
    Candidate second = candidate(nodes.get(1), id, election);
    CapturedLog log = cleanup(CapturedLog.start());
    long started = System.nanoTime();
    second.elector().start();

    waiting("until " + second + " was answered")
        .until(
            () ->
                !history
                    .calls(
                        election,
                        c ->
                            c.node().equals(nodes.get(1).name())
                                && c.kind() == Kind.ACQUIRE
                                && c.outcome() != Outcome.FAILED
                                && c.startNanos() - started > 0)
                    .isEmpty());
    // Long enough for a store that grants the second at once to end the first's term: its next
    // renewals are refused then.
    long answered = System.nanoTime();
    awaitRenewals(
        "until " + first + " renewed twice since",
        election,
        2,
        answered,
        c -> c.node().equals(nodes.get(0).name()) && c.outcome() != Outcome.FAILED);
    assertThat(
            history.grants(election).stream()
                .filter(g -> g.node().equals(nodes.get(1).name()))
                .map(g -> "token " + g.token() + " at " + at(g.endNanos()))
                .toList())
        .as("grants to %s on %s while %s leads with token %s", id, nodes.get(1), id, term.token())
        .isEmpty();
    assertThat(first.toldTerm()).as("%s's term", first).contains(term);
    assertThat(second.elected()).as("terms %s was elected for", second).isEmpty();
    assertThat(
            log.text()
                .lines()
                .filter(l -> l.contains("ERROR") && l.contains("'" + election + "'"))
                .filter(l -> l.contains("uses the same candidate id '" + id + "'"))
                .toList())
        .as("ERROR lines about the shared id, while %s was refused", second)
        .hasSize(1);
    log.close();
    Acquisition refused = nodes.get(1).store().tryAcquire(election, id, timings.leaseDuration());
    assertThat(refused.isGranted()).as("an acquire by %s on %s", id, nodes.get(1)).isFalse();
    assertThat(refused.holder())
        .hasValueSatisfying(
            h -> assertThat(List.of(h.holder(), h.token())).containsExactly(id, term.token()));

    long closing = System.nanoTime();
    first.elector().close();
    Term next = awaitNewTerm(List.of(second), closing);
    assertThat(next.token()).as("the second's token").isGreaterThan(term.token());
  }

  @Test
  @DisplayName(
      "17a an Error thrown by TermWork.start gives the term up at once, and the elector leads again later")
  void anErrorFromStartingTheWorkGivesTheTermUp() {
    errorInUserCode("s17a", FaultyUserCode.Fault.ERROR_ON_START);
  }

  @Test
  @DisplayName(
      "17b an Error thrown when the work stops still ends the term and releases the lease, and the elector leads again later")
  void anErrorFromStoppingTheWorkStillReleasesTheLease() {
    errorInUserCode("s17b", FaultyUserCode.Fault.ERROR_ON_STOP);
  }

  @Test
  @DisplayName(
      "17c an Error thrown by a listener's onElected and onRevoked is contained: the others are told, the lease is released, the elector leads again later")
  void anErrorFromAListenerIsContained() {
    errorInUserCode("s17c", FaultyUserCode.Fault.ERROR_IN_LISTENER);
  }

  /**
   * Node 1's user code throws an {@link Error} once; node 2 follows. The term with the failure ends
   * (on its own when the work could not start, by {@code stepDown()} otherwise) and node 1 gives
   * its lease back, so node 2 leads before node 1's lease could have run out. Then node 2 closes,
   * node 1 leads again and is told so, and its {@code close()} ends it for good.
   */
  private void errorInUserCode(String scenario, FaultyUserCode.Fault fault) {
    userCodeThrows();
    String election = newElection(scenario);
    List<Node> nodes = nodes(2);
    FaultyUserCode code = FaultyUserCode.throwing(fault, history);
    boolean inWork = fault != FaultyUserCode.Fault.ERROR_IN_LISTENER;
    Candidate faulty =
        candidate(
            nodes.get(0),
            election,
            timings,
            b -> {
              if (inWork) {
                b.whileLeader(code);
              } else {
                b.listener(code);
              }
            });
    faulty.elector().start();
    Call first =
        waiting("until " + faulty.name() + " is granted")
            .until(() -> history.grants(election), g -> !g.isEmpty())
            .get(0);
    Candidate other = candidate(nodes.get(1), election);
    other.elector().start();
    if (fault == FaultyUserCode.Fault.ERROR_ON_START) {
      waiting("until " + faulty.name() + " gives up the term whose work failed to start")
          .until(() -> !faulty.isLeader());
    } else {
      waiting("until " + faulty.name() + " is told that it leads")
          .until(() -> !faulty.elected().isEmpty());
      Term failing = faulty.elected().get(0);
      faulty.elector().stepDown();
      waiting(
              "until "
                  + faulty.name()
                  + "'s listener after the failing one is told that token "
                  + failing.token()
                  + " was revoked")
          .until(() -> faulty.revoked().contains(failing));
    }

    awaitNewLeader(List.of(other), first.endNanos());
    Call grant = firstGrantAfter(election, first.endNanos());
    Call lastOfFaulty = history.lastConfirmed(election, faulty.name()).orElseThrow();
    long ranOut = lastOfFaulty.startNanos() + lastOfFaulty.ttl().toNanos();
    assertThat(grant.endNanos())
        .as(
            "%s was granted at %s, when %s's lease ran out (%s): %s did not give its lease back after the Error",
            other.name(), at(grant.endNanos()), faulty.name(), at(ranOut), faulty.name())
        .isLessThan(ranOut);

    long handingBack = System.nanoTime();
    other.elector().close();
    Term again = awaitNewTerm(List.of(faulty), handingBack);
    waiting("until " + faulty.name() + "'s user code runs for token " + again.token())
        .until(() -> code.started().contains(again));
    faulty.elector().close();
    assertThat(faulty.elector().isRunning())
        .as("%s is running after close() returned", faulty.name())
        .isFalse();
    assertThat(faulty.revoked()).as("terms revoked of %s", faulty.name()).contains(again);
    assertThat(code.stoppedAt(again))
        .as("the stop of %s's user code for token %s", faulty.name(), again.token())
        .isPresent();
  }
}
