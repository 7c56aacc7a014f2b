package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Electors on a store that renews in batches: on a fake clock and a manual scheduler, with store
 * calls run inline, so each batch the store sees is exactly what the engine handed it.
 */
class RenewalBatchingTest {

  static final Duration LEASE = Duration.ofSeconds(15);
  static final Duration DEADLINE = Duration.ofSeconds(10);
  static final Duration RETRY = Duration.ofSeconds(2);
  static final int LIMIT = 20;

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final BatchingStore store =
      new BatchingStore(new MemoryLeaseStore(clock, java.time.Clock.systemUTC()), clock);
  final List<Elector> electors = new ArrayList<>();
  ExecutorService pool;

  @AfterEach
  void closeAll() {
    CountDownLatch gate = store.hang;
    if (gate != null) {
      gate.countDown();
    }
    electors.forEach(Elector::close);
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  Elector leader(String election) {
    return leader(election, Runnable::run);
  }

  Elector leader(String election, java.util.concurrent.Executor executor) {
    Elector e =
        Elector.builder(store)
            .election(election)
            .candidate("node")
            .leaseDuration(LEASE)
            .renewDeadline(DEADLINE)
            .retryPeriod(RETRY)
            .clock(clock)
            .scheduler(scheduler)
            .executor(executor)
            .ownPool(executor)
            .build();
    electors.add(e);
    e.start();
    await().pollDelay(Duration.ZERO).until(e::isLeader);
    return e;
  }

  @Test
  @DisplayName(
      "leaders sharing a store renew together in batches of at most the store's limit, never one by one")
  void leadersRenewTogether() {
    for (int i = 0; i < 50; i++) {
      leader("e" + i);
    }

    scheduler.advance(RETRY.multipliedBy(5));

    assertThat(store.singleRenewals).hasValue(0);
    assertThat(store.batchSizes).allSatisfy(size -> assertThat(size).isBetween(1, LIMIT));
    // 50 leases a period, at most 20 a call: three calls a period, five periods.
    assertThat(store.batchSizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(250);
    assertThat(store.batchSizes).hasSize(15);
    assertThat(electors).allSatisfy(e -> assertThat(e.isLeader()).isTrue());
  }

  @Test
  @DisplayName(
      "renewals at a store's own period go out a whole period apart, though it is no multiple of the usual slot")
  void renewalsAtAStoresPeriodGoOutAWholePeriodApart() {
    Duration period = Duration.ofMillis(3975);
    store.renewalPeriod = period;
    leader("paced");

    scheduler.advance(period.multipliedBy(6));

    List<Long> at = store.batchNanos;
    assertThat(at).hasSizeGreaterThanOrEqualTo(5);
    for (int i = 2; i < at.size(); i++) {
      assertThat(at.get(i) - at.get(i - 1))
          .as("between renewals %d and %d", i - 1, i)
          .isEqualTo(period.toNanos());
    }
  }

  @Test
  @DisplayName("a lease lost in a batch ends only its own term; the others lead on")
  void aLostLeaseEndsOnlyItsTerm() {
    List<Elector> leaders = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      leaders.add(leader("e" + i));
    }
    Elector victim = leaders.get(3);
    Term lost = victim.currentTerm().orElseThrow();
    // Somebody else's view of the store: the lease is given back behind the leader's back.
    store.memory.release(store.granted.get("e3"));
    store.memory.tryAcquire("e3", "intruder", LEASE);

    scheduler.advance(RETRY);

    assertThat(lost.isEnded()).isTrue();
    assertThat(victim.currentLeader()).hasValue("intruder");
    assertThat(leaders)
        .filteredOn(e -> e != victim)
        .allSatisfy(e -> assertThat(e.isLeader()).isTrue());
  }

  @Test
  @DisplayName(
      "a leader that stops before its batch goes out is not renewed, and its lease is free at once")
  void aStoppedLeaderIsLeftOutOfTheBatch() {
    Elector stays = leader("stays");
    Elector stops = leader("stops");

    stops.close();
    scheduler.advance(RETRY);

    assertThat(store.renewed).containsExactly("stays");
    assertThat(stays.isLeader()).isTrue();
    assertThat(store.memory.read("stops")).isEmpty();
  }

  @Test
  @DisplayName(
      "when a batch fails as a whole every leader in it leads on until its own renew deadline")
  void aFailedBatchIsRetriedUntilTheDeadline() {
    Elector one = leader("one");
    Elector two = leader("two");
    store.failBatches = true;

    scheduler.advance(RETRY);
    assertThat(one.isLeader()).isTrue();
    assertThat(two.isLeader()).isTrue();

    scheduler.advance(DEADLINE);
    assertThat(one.isLeader()).isFalse();
    assertThat(two.isLeader()).isFalse();

    store.failBatches = false;
    scheduler.advance(RETRY.multipliedBy(3));
    assertThat(one.isLeader()).isTrue();
    assertThat(two.isLeader()).isTrue();
  }

  @Test
  @DisplayName("a batch call that hangs past the renew deadline does not keep its leaders leading")
  void aHangingBatchEndsTermsAtTheDeadline() throws InterruptedException {
    pool = Executors.newCachedThreadPool();
    Term one = leader("one", pool).currentTerm().orElseThrow();
    Term two = leader("two", pool).currentTerm().orElseThrow();
    store.hang = new CountDownLatch(1);

    scheduler.advance(RETRY);
    await().until(() -> store.hanging.get() == 1);
    assertThat(one.isEnded()).isFalse();
    scheduler.advance(DEADLINE);

    await().until(() -> one.isEnded() && two.isEnded());
    store.hang.countDown();
  }

  /** A memory store that says it renews in batches and records what each batch held. */
  static final class BatchingStore implements LeaseStore {
    final MemoryLeaseStore memory;
    final AtomicInteger singleRenewals = new AtomicInteger();
    final List<Integer> batchSizes = new CopyOnWriteArrayList<>();
    final List<String> renewed = new CopyOnWriteArrayList<>();
    final Map<String, Lease> granted = new ConcurrentHashMap<>();
    volatile boolean failBatches;
    volatile CountDownLatch hang;
    final AtomicInteger hanging = new AtomicInteger();

    /** When set, what {@link #renewalPeriod} answers. */
    volatile Duration renewalPeriod;

    /** When each {@code renewAll} call came, on the test's clock. */
    final List<Long> batchNanos = new CopyOnWriteArrayList<>();

    private final MonotonicClock clock;

    BatchingStore(MemoryLeaseStore memory) {
      this(memory, MonotonicClock.system());
    }

    BatchingStore(MemoryLeaseStore memory, MonotonicClock clock) {
      this.memory = memory;
      this.clock = clock;
    }

    @Override
    public Optional<Duration> renewalPeriod(Lease lease) {
      return Optional.ofNullable(renewalPeriod);
    }

    @Override
    public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
      Acquisition a = memory.tryAcquire(election, candidate, ttl);
      a.lease().ifPresent(l -> granted.put(election, l));
      return a;
    }

    @Override
    public Lease renew(Lease lease) {
      singleRenewals.incrementAndGet();
      return memory.renew(lease);
    }

    @Override
    public List<Renewal> renewAll(List<Lease> leases) {
      batchNanos.add(clock.nanoTime());
      if (failBatches) {
        throw new LeaseStoreException("*", "store down (scripted)");
      }
      CountDownLatch gate = hang;
      if (gate != null) {
        hanging.incrementAndGet();
        try {
          gate.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new LeaseStoreException("*", "interrupted");
        }
      }
      batchSizes.add(leases.size());
      leases.forEach(l -> renewed.add(l.election()));
      return memory.renewAll(leases);
    }

    @Override
    public int renewBatchLimit() {
      return LIMIT;
    }

    @Override
    public void release(Lease lease) {
      memory.release(lease);
    }

    @Override
    public Optional<LeaseRecord> read(String election) {
      return memory.read(election);
    }

    @Override
    public String describe() {
      return "batching memory";
    }

    @Override
    public void close() {}
  }
}
