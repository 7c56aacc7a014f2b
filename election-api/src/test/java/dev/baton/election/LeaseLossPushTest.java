package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A leader watches its own lease ({@link LeaseStore#watchLease}) and ends its term the moment the
 * store reports it gone, not at its next renewal. On the fake clock of {@link ElectorTest}: no time
 * passes between the loss and the assertions, so only the push can have ended the term.
 */
class LeaseLossPushTest {

  static final Duration LEASE = ElectorTest.LEASE;
  static final Duration DEADLINE = ElectorTest.DEADLINE;
  static final Duration RETRY = ElectorTest.RETRY;

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final MemoryLeaseStore shared = new MemoryLeaseStore(clock, java.time.Clock.systemUTC());
  final ScriptedStore storeA = new ScriptedStore(shared);
  final ScriptedStore storeB = new ScriptedStore(shared);
  final RecordingListener a = new RecordingListener();
  final RecordingListener b = new RecordingListener();
  final List<Elector> electors = new ArrayList<>();

  @AfterEach
  void tearDown() {
    electors.forEach(Elector::close);
  }

  Elector elector(ScriptedStore store, String candidate, RecordingListener listener) {
    Elector e =
        Elector.builder(store)
            .election("billing")
            .candidate(candidate)
            .leaseDuration(LEASE)
            .renewDeadline(DEADLINE)
            .retryPeriod(RETRY)
            .clock(clock)
            .scheduler(scheduler)
            .executor(Runnable::run)
            .ownPool(Runnable::run)
            .listener(listener)
            .whileLeader(term -> () -> store.record("work stopped " + term.token()))
            .build();
    electors.add(e);
    return e;
  }

  @Test
  @DisplayName("a lease deleted behind the leader's back ends its term at once, before any renewal")
  void deletedLeaseEndsTheTermAtOnce() {
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Term term = a.lastTerm();

    shared.revoke("billing");

    assertThat(term.isValid()).as("term valid after its lease was deleted").isFalse();
    assertThat(storeA.renewals).hasValue(0);
    assertThat(storeA.calls()).contains("work stopped 1");
    assertThat(a.terms()).startsWith("elected 1", "revoked 1");
  }

  @Test
  @DisplayName("after a pushed loss the elector campaigns again and leads with a higher token")
  void campaignsAgainAfterAPushedLoss() {
    Elector ea = elector(storeA, "a", a);
    ea.start();

    shared.revoke("billing");

    assertThat(ea.isLeader()).isTrue();
    assertThat(a.terms()).containsExactly("elected 1", "revoked 1", "elected 2");
    List<String> calls = storeA.calls();
    assertThat(calls.indexOf("work stopped 1"))
        .isNotNegative()
        .isLessThan(calls.lastIndexOf("acquire a"));
  }

  /**
   * The callbacks run on an executor of the application's that is behind (a queue drained later):
   * the lease deleted, the elector must not take the election again while its last term's work may
   * still be running, though nobody else holds it. Seen in conformance scenario 20 on the memory
   * store: token 2 granted to the same node before the work of token 1 had stopped.
   */
  @Test
  @DisplayName("after a pushed loss the elector campaigns again only once the term's work stopped")
  void campaignsAgainOnlyOnceTheWorkStopped() {
    List<Runnable> callbacks = new ArrayList<>();
    Elector ea =
        Elector.builder(storeA)
            .election("billing")
            .candidate("a")
            .leaseDuration(LEASE)
            .renewDeadline(DEADLINE)
            .retryPeriod(RETRY)
            .clock(clock)
            .scheduler(scheduler)
            .executor(callbacks::add)
            .ownPool(Runnable::run)
            .listener(a)
            .whileLeader(term -> () -> storeA.record("work stopped " + term.token()))
            .build();
    electors.add(ea);
    ea.start();
    runAll(callbacks);
    assertThat(a.terms()).containsExactly("elected 1");

    shared.revoke("billing");

    assertThat(storeA.calls()).as("before the work stopped").containsOnlyOnce("acquire a");
    runAll(callbacks);
    List<String> calls = storeA.calls();
    assertThat(calls.indexOf("work stopped 1"))
        .as("the work's stop before the next acquire: %s", calls)
        .isNotNegative()
        .isLessThan(calls.lastIndexOf("acquire a"));
    runAll(callbacks);
    assertThat(ea.isLeader()).isTrue();
    assertThat(a.terms()).containsExactly("elected 1", "revoked 1", "elected 2");
  }

  private static void runAll(List<Runnable> tasks) {
    while (!tasks.isEmpty()) {
      tasks.remove(0).run();
    }
  }

  @Test
  @DisplayName("a lease taken by another candidate ends the leader's term, and it follows")
  void takenLeaseEndsTheTermAndTheLeaderFollows() {
    Elector ea = elector(storeA, "a", a);
    ea.start();
    storeA.failAll = true; // a cannot take it back: it is cut off, as a stalled node would be
    shared.revoke("billing");
    Elector eb = elector(storeB, "b", b);
    eb.start();
    storeA.failAll = false;

    assertThat(eb.isLeader()).isTrue();
    assertThat(ea.isLeader()).isFalse();
    assertThat(a.terms()).containsExactly("elected 1", "revoked 1");
    assertThat(storeA.renewals).hasValue(0);
  }

  @Test
  @DisplayName("the leader's own renewals never end its term")
  void ownRenewalsAreNoLoss() {
    Elector ea = elector(storeA, "a", a);
    ea.start();

    for (int i = 0; i < 10; i++) {
      scheduler.advance(RETRY);
    }

    assertThat(storeA.renewals.get()).isGreaterThanOrEqualTo(9);
    assertThat(ea.isLeader()).isTrue();
    assertThat(a.terms()).containsExactly("elected 1");
  }

  @Test
  @DisplayName(
      "a spurious report ends the term as a lost renewal would; nobody else leads until the lease runs out")
  void spuriousReportCostsOnlyTime() {
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Elector eb = elector(storeB, "b", b);
    eb.start();

    storeA.lastLeaseWatcher.run(); // the store says lost while the lease is still a's

    assertThat(a.terms()).containsExactly("elected 1", "revoked 1");
    assertThat(storeA.calls()).doesNotContain("release a 1");
    assertThat(eb.isLeader()).as("b, while a's lease lives").isFalse();

    scheduler.advance(LEASE.plus(RETRY));
    assertThat(ea.isLeader() ^ eb.isLeader()).as("exactly one leads again").isTrue();
  }

  @Test
  @DisplayName("the lease watch lives exactly as long as the term")
  void watchClosedWhenTheTermEnds() {
    Elector ea = elector(storeA, "a", a);
    ea.start();
    assertThat(storeA.openLeaseWatches).hasValue(1);

    ea.stepDown();
    assertThat(storeA.openLeaseWatches).hasValue(0);

    scheduler.advance(RETRY.multipliedBy(3));
    assertThat(ea.isLeader()).isTrue();
    assertThat(storeA.openLeaseWatches).hasValue(1);

    ea.close();
    assertThat(storeA.openLeaseWatches).hasValue(0);
  }

  @Test
  @DisplayName("a store that cannot watch leases still ends the term at the next renewal")
  void withoutAWatchTheRenewalTells() {
    storeA.canWatchLease = false;
    Elector ea = elector(storeA, "a", a);
    ea.start();

    shared.revoke("billing");
    assertThat(ea.isLeader()).isTrue();

    scheduler.advance(RETRY);
    assertThat(a.terms()).startsWith("elected 1", "revoked 1");
  }
}
