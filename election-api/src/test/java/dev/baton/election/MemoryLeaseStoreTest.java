package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The lease contract of {@link LeaseStore} on the in-memory store, with time moved by hand. */
class MemoryLeaseStoreTest {

  private static final String ELECTION = "billing-cron";
  private static final Duration TTL = Duration.ofSeconds(15);
  private static final Duration NANO = Duration.ofNanos(1);
  private static final Instant WALL = Instant.parse("2026-11-22T12:00:00Z");

  private final FakeClock clock = new FakeClock();
  private final MemoryLeaseStore store =
      new MemoryLeaseStore(clock, Clock.fixed(WALL, ZoneOffset.UTC));

  private Lease grant(String candidate) {
    Acquisition acquisition = store.tryAcquire(ELECTION, candidate, TTL);
    assertThat(acquisition.isGranted()).as("%s is granted: %s", candidate, acquisition).isTrue();
    return acquisition.lease().orElseThrow();
  }

  private void assertRefusedTo(String candidate, String holder) {
    Acquisition acquisition = store.tryAcquire(ELECTION, candidate, TTL);
    assertThat(acquisition.isGranted()).as("%s is refused: %s", candidate, acquisition).isFalse();
    assertThat(acquisition.holder().orElseThrow().holder()).isEqualTo(holder);
  }

  // --- exclusion and expiry -------------------------------------------------------------------

  @Test
  void aFreeElectionIsGrantedWithTheTtlAskedFor() {
    Lease lease = grant("a");

    assertThat(lease.election()).isEqualTo(ELECTION);
    assertThat(lease.candidate()).isEqualTo("a");
    assertThat(lease.ttl()).isEqualTo(TTL);
  }

  @Test
  void anotherCandidateIsRefusedUntilTheTtlHasPassedSinceTheGrant() {
    Lease a = grant("a");

    assertRefusedTo("b", "a");
    clock.advance(TTL.minus(NANO));
    Acquisition refused = store.tryAcquire(ELECTION, "b", TTL);
    assertThat(refused.isGranted()).isFalse();
    assertThat(refused.holder().orElseThrow().token()).isEqualTo(a.token());

    clock.advance(NANO);
    assertThat(grant("b").token().isNewerThan(a.token())).isTrue();
  }

  @Test
  void aRenewalExtendsExclusionToTheTtlFromTheRenewal() {
    Lease a = grant("a");
    clock.advance(Duration.ofSeconds(10));
    store.renew(a);

    clock.advance(TTL.minus(NANO));
    assertRefusedTo("b", "a");
    clock.advance(NANO);
    grant("b");
  }

  @Test
  void electionsAreIndependent() {
    grant("a");

    assertThat(store.tryAcquire("another-election", "b", TTL).isGranted()).isTrue();
  }

  @Test
  void aLiveLeaseIsRefusedToItsOwnHolderIdNamingItAndItsToken() {
    Lease a = store.tryAcquire(ELECTION, "a", TTL).lease().orElseThrow();

    Acquisition again = store.tryAcquire(ELECTION, "a", TTL);

    assertThat(again.isGranted()).isFalse();
    assertThat(again.holder())
        .hasValueSatisfying(
            h -> assertThat(List.of(h.holder(), h.token())).containsExactly("a", a.token()));
    assertThat(store.renew(a).token()).isEqualTo(a.token());
  }

  // --- fencing tokens -------------------------------------------------------------------------

  @Test
  void everyGrantHasAStrictlyHigherTokenWhoeverGetsIt() {
    List<FencingToken> tokens = new ArrayList<>();
    Lease a = store.tryAcquire(ELECTION, "a", TTL).lease().orElseThrow();
    tokens.add(a.token());
    store.release(a);
    tokens.add(grant("a").token()); // again after its release: a new term
    clock.advance(TTL);
    Lease b = store.tryAcquire(ELECTION, "b", TTL).lease().orElseThrow();
    tokens.add(b.token()); // after expiry
    store.release(b);
    tokens.add(grant("a").token()); // after release

    assertThat(tokens).doesNotHaveDuplicates().isSortedAccordingTo(FencingToken::compareTo);
  }

  @Test
  void aGrantToTheHolderAfterItsReleaseBeginsANewTermAndEndsTheOldOne() {
    Lease first = grant("a");
    store.release(first);
    Lease second = grant("a");

    assertThat(second.token().isNewerThan(first.token())).isTrue();
    assertThatThrownBy(() -> store.renew(first))
        .isInstanceOf(LeaseLostException.class)
        .satisfies(e -> assertThat(((LeaseLostException) e).holder()).contains("a"));
    assertThat(store.renew(second).token()).isEqualTo(second.token());
  }

  // --- renew ----------------------------------------------------------------------------------

  @Test
  void renewKeepsTheToken() {
    Lease lease = grant("a");
    clock.advance(Duration.ofSeconds(5));

    Lease renewed = store.renew(lease);

    assertThat(renewed.token()).isEqualTo(lease.token());
    assertThat(store.read(ELECTION).orElseThrow().token()).isEqualTo(lease.token());
  }

  @Test
  void renewIsRefusedOnceTheLeaseHasExpiredEvenIfNobodyTookIt() {
    Lease lease = grant("a");
    clock.advance(TTL);

    assertThatThrownBy(() -> store.renew(lease))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining(ELECTION)
        .satisfies(e -> assertThat(((LeaseLostException) e).holder()).isEmpty());
  }

  @Test
  void renewIsRefusedAfterATakeoverNamingTheNewHolder() {
    Lease lease = grant("a");
    clock.advance(TTL);
    grant("b");

    assertThatThrownBy(() -> store.renew(lease))
        .isInstanceOf(LeaseLostException.class)
        .satisfies(e -> assertThat(((LeaseLostException) e).holder()).contains("b"));
  }

  @Test
  void renewIsRefusedAfterRelease() {
    Lease lease = grant("a");
    store.release(lease);

    assertThatThrownBy(() -> store.renew(lease)).isInstanceOf(LeaseLostException.class);
  }

  // --- release --------------------------------------------------------------------------------

  @Test
  void releaseLetsAnotherCandidateInAtOnce() {
    Lease a = grant("a");

    store.release(a);

    assertThat(store.read(ELECTION)).isEmpty();
    assertThat(grant("b").token().isNewerThan(a.token())).isTrue();
  }

  @Test
  void releasingAnOldLeaseAfterATakeoverLeavesTheNewHoldersLease() {
    Lease a = grant("a");
    clock.advance(TTL);
    Lease b = grant("b");

    store.release(a);

    assertThat(store.read(ELECTION).orElseThrow().holder()).isEqualTo("b");
    assertRefusedTo("c", "b");
    assertThat(store.renew(b).token()).isEqualTo(b.token());
  }

  @Test
  void releasingAnEarlierTermOfTheSameCandidateLeavesItsCurrentTerm() {
    Lease earlier = grant("a");
    store.release(earlier);
    Lease current = grant("a");

    store.release(earlier);

    assertThat(store.read(ELECTION).orElseThrow().token()).isEqualTo(current.token());
    assertRefusedTo("b", "a");
  }

  @Test
  void aNonPositiveTtlIsRefusedWithoutTouchingTheCurrentLease() {
    Lease lease = grant("a");

    assertThatThrownBy(() -> store.tryAcquire(ELECTION, "a", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
    assertThatThrownBy(() -> store.tryAcquire(ELECTION, "a", Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);

    assertThat(store.read(ELECTION).orElseThrow().token()).isEqualTo(lease.token());
    assertThat(store.renew(lease).token()).isEqualTo(lease.token());
  }

  // --- read -----------------------------------------------------------------------------------

  @Test
  void readShowsNobodyBeforeTheFirstGrant() {
    assertThat(store.read(ELECTION)).isEmpty();
  }

  @Test
  void readShowsTheHolderTokenTtlAndWhenItWasRenewed() {
    Lease lease = grant("a");

    LeaseRecord record = store.read(ELECTION).orElseThrow();

    assertThat(record.election()).isEqualTo(ELECTION);
    assertThat(record.holder()).isEqualTo("a");
    assertThat(record.token()).isEqualTo(lease.token());
    assertThat(record.ttl()).isEqualTo(TTL);
    assertThat(record.renewedAt()).contains(WALL);
  }

  @Test
  void readShowsNobodyOnceTheLeaseHasExpired() {
    grant("a");
    clock.advance(TTL.minus(NANO));
    assertThat(store.read(ELECTION)).isPresent();

    clock.advance(NANO);

    assertThat(store.read(ELECTION)).isEmpty();
  }

  @Test
  void expiresInDecreasesWithTheClockAndARenewalRestoresIt() {
    Lease lease = grant("a");
    assertThat(store.read(ELECTION).orElseThrow().expiresIn()).contains(TTL);

    clock.advance(Duration.ofSeconds(4));
    assertThat(store.read(ELECTION).orElseThrow().expiresIn()).contains(Duration.ofSeconds(11));

    clock.advance(Duration.ofSeconds(10));
    assertThat(store.read(ELECTION).orElseThrow().expiresIn()).contains(Duration.ofSeconds(1));

    store.renew(lease);
    assertThat(store.read(ELECTION).orElseThrow().expiresIn()).contains(TTL);
  }

  // --- watch ----------------------------------------------------------------------------------

  @Test
  void watchFiresOnGrantAndOnRelease() {
    AtomicInteger changes = new AtomicInteger();
    store.watch(ELECTION, changes::incrementAndGet).orElseThrow();

    Lease lease = grant("a");
    assertThat(changes).hasValue(1);

    store.release(lease);
    assertThat(changes).hasValue(2);
  }

  @Test
  void watchFiresWhenAnExpiredLeaseIsTakenOver() {
    grant("a");
    AtomicInteger changes = new AtomicInteger();
    store.watch(ELECTION, changes::incrementAndGet).orElseThrow();
    clock.advance(TTL);

    grant("b");

    assertThat(changes).hasValue(1);
  }

  @Test
  void watchStopsFiringOnceItsSubscriptionIsClosed() {
    AtomicInteger changes = new AtomicInteger();
    Subscription subscription = store.watch(ELECTION, changes::incrementAndGet).orElseThrow();
    Lease lease = grant("a");

    subscription.close();
    store.release(lease);

    assertThat(changes).hasValue(1);
  }

  @Test
  void closingASubscriptionTwiceLeavesAnotherSubscriptionOfTheSameCallback() {
    AtomicInteger changes = new AtomicInteger();
    Runnable changed = changes::incrementAndGet;
    Subscription first = store.watch(ELECTION, changed).orElseThrow();
    store.watch(ELECTION, changed).orElseThrow();

    first.close();
    first.close();
    grant("a");

    assertThat(changes).hasValue(1);
  }

  @Test
  void aWatcherThatThrowsNeitherHidesTheGrantNorSilencesOtherWatchers() {
    AtomicInteger changes = new AtomicInteger();
    store.watch(
        ELECTION,
        () -> {
          throw new IllegalStateException("a broken watcher (expected in this test)");
        });
    store.watch(ELECTION, changes::incrementAndGet);

    Acquisition acquisition = store.tryAcquire(ELECTION, "a", TTL);

    assertThat(acquisition.isGranted()).isTrue();
    assertThat(changes).hasValue(1);
    store.release(acquisition.lease().orElseThrow());
    assertThat(changes).hasValue(2);
    assertThat(store.read(ELECTION)).isEmpty();
  }

  @Test
  void closingTheStoreEndsItsWatches() {
    AtomicInteger changes = new AtomicInteger();
    store.watch(ELECTION, changes::incrementAndGet);

    store.close();
    grant("a");

    assertThat(changes).hasValue(0);
  }

  // --- expiry reports
  // -----------------------------------------------------------------------------

  @Test
  void onTheProcessClockTheWatchReportsALeaseThatRanOutButNotOneThatWasRenewed() {
    try (MemoryLeaseStore live = new MemoryLeaseStore()) {
      assertThat(live.watchReportsExpiry()).isTrue();
      AtomicInteger reports = new AtomicInteger();
      AtomicInteger whileLive = new AtomicInteger();
      Lease lease = live.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)).lease().orElseThrow();
      live.watch(
          ELECTION,
          () -> {
            reports.incrementAndGet();
            if (live.read(ELECTION).isPresent()) {
              whileLive.incrementAndGet();
            }
          });
      // Renewed well past its first expiry: the timer finds it renewed each time and says nothing.
      long renewUntil = System.nanoTime() + Duration.ofMillis(1500).toNanos();
      while (System.nanoTime() - renewUntil < 0) {
        live.renew(lease);
      }
      assertThat(reports).hasValue(0);

      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> reports.get() > 0);
      assertThat(whileLive).hasValue(0);
      assertThat(live.read(ELECTION)).isEmpty();
    }
  }

  @Test
  void onAClockMovedByHandTheWatchReportsChangesOnly() {
    assertThat(store.watchReportsExpiry()).isFalse();
  }
}
