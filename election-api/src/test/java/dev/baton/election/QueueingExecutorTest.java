package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The executor a user passes to {@link ElectorBuilder#executor} may queue (a fixed pool, the common
 * pool) or refuse; the store may stop answering. Neither may hold a leader's work past the moment
 * its lease could go to another node. Real threads and the real clock: what is tested is which
 * queue each task waits in.
 */
class QueueingExecutorTest {

  private static final Duration LEASE = Duration.ofSeconds(3);
  private static final Duration DEADLINE = Duration.ofSeconds(2);
  private static final Duration RETRY = Duration.ofMillis(500);
  private static final Duration WAIT = Duration.ofSeconds(60);

  private final List<Elector> electors = new ArrayList<>();
  private final List<ExecutorService> pools = new ArrayList<>();
  private final CountDownLatch slowWorkMayStop = new CountDownLatch(1);
  private StallingStore store;

  @AfterEach
  void tearDown() {
    slowWorkMayStop.countDown();
    if (store != null) {
      store.heal();
    }
    electors.forEach(Elector::close);
    pools.forEach(ExecutorService::shutdownNow);
  }

  @Test
  @DisplayName(
      "ten leaders on a fixed pool of two stop their work before their leases can pass when the store stalls")
  void leadersOnAFixedPoolStopTheirWorkBeforeTheirLeasesCanPassWhenTheStoreStalls() {
    store = new StallingStore(Duration.ofSeconds(1));
    ExecutorService pool = pool(Executors.newFixedThreadPool(2));
    Map<String, Long> stoppedAt = new ConcurrentHashMap<>();
    for (int i = 0; i < 10; i++) {
      electors.add(leader("e" + i, pool, DEADLINE, null, stoppedAt));
    }
    electors.forEach(Elector::start);
    await().atMost(WAIT).until(() -> electors.stream().allMatch(Elector::isLeader));

    store.stall();
    await().atMost(WAIT).until(() -> stoppedAt.size() == electors.size());

    assertWorkStoppedBeforeLeaseCouldPass(stoppedAt);
  }

  @Test
  @DisplayName(
      "when the executor refuses, one leader's slow stop does not hold up another leader's step-down")
  void whenTheExecutorRefusesOneLeadersSlowStopDoesNotHoldUpAnother() {
    store = new StallingStore(Duration.ofMillis(500));
    RefusingExecutor executor = new RefusingExecutor(pool(Executors.newCachedThreadPool()));
    // One timer thread for both, as all electors of a process share one by default.
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    pools.add(timer);
    Map<String, Long> stoppedAt = new ConcurrentHashMap<>();
    // The slow one's deadline is the shorter, so it comes first.
    Elector slow = leader("slow", executor, Duration.ofSeconds(1), timer, stoppedAt);
    Elector quick = leader("quick", executor, DEADLINE, timer, stoppedAt);
    electors.add(slow);
    electors.add(quick);
    electors.forEach(Elector::start);
    await().atMost(WAIT).until(() -> slow.isLeader() && quick.isLeader());

    executor.refuse();
    store.stall();
    await().atMost(WAIT).until(() -> stoppedAt.containsKey("quick"));

    assertWorkStoppedBeforeLeaseCouldPass(Map.of("quick", stoppedAt.get("quick")));
  }

  @Test
  @DisplayName("an Error thrown by the store's follow does not keep close() from finishing")
  void anErrorFromFollowDoesNotKeepCloseFromFinishing() {
    store = new StallingStore(Duration.ofSeconds(1));
    store.delegate().tryAcquire("held", "other", Duration.ofMinutes(1));
    store.followFailsWith(new StoreBug("follow broke"));
    Elector follower =
        Elector.builder(store)
            .election("held")
            .candidate("follower")
            .leaseDuration(LEASE)
            .renewDeadline(DEADLINE)
            .retryPeriod(RETRY)
            .closeOnShutdown(false)
            .build();
    electors.add(follower);
    follower.start();
    // The Error goes on to the pool thread's handler, as a store's bug should be seen.
    await().atMost(WAIT).dontCatchUncaughtExceptions().until(() -> store.follows.get() > 0);

    follower.close();

    assertThat(follower.isRunning()).as("the follower is still stopping after close()").isFalse();
  }

  private Elector leader(
      String election,
      Executor executor,
      Duration renewDeadline,
      ScheduledExecutorService timer,
      Map<String, Long> stoppedAt) {
    ElectorBuilder b =
        Elector.builder(store)
            .election(election)
            .candidate("node")
            .leaseDuration(LEASE)
            .renewDeadline(renewDeadline)
            .retryPeriod(RETRY)
            .executor(executor)
            .closeOnShutdown(false)
            .whileLeader(
                term ->
                    () -> {
                      stoppedAt.putIfAbsent(term.election(), System.nanoTime());
                      if (term.election().equals("slow")) {
                        slowWorkMayStop.await(20, TimeUnit.SECONDS);
                      }
                    });
    if (timer != null) {
      b.scheduler(timer);
    }
    return b.build();
  }

  /**
   * The safety property: the store counts a lease from no earlier than the start of the call that
   * granted or renewed it, so another node can have it once {@code LEASE} has passed since the
   * start of the last call the store confirmed. The work must have stopped before then.
   */
  private void assertWorkStoppedBeforeLeaseCouldPass(Map<String, Long> stoppedAt) {
    Map<String, Long> millisAfterLastConfirmedStart = new TreeMap<>();
    stoppedAt.forEach(
        (election, at) ->
            millisAfterLastConfirmedStart.put(
                election,
                TimeUnit.NANOSECONDS.toMillis(at - store.lastConfirmedStart.get(election))));
    assertThat(millisAfterLastConfirmedStart)
        .as(
            "ms from the start of each leader's last confirmed renewal to its work stopping"
                + " (renew deadline %s ms, lease %s ms)",
            DEADLINE.toMillis(), LEASE.toMillis())
        .allSatisfy((election, ms) -> assertThat(ms).isLessThan(LEASE.toMillis()));
  }

  private ExecutorService pool(ExecutorService pool) {
    pools.add(pool);
    return pool;
  }

  static final class StoreBug extends Error {
    StoreBug(String message) {
      super(message);
    }
  }

  /** Takes work until told to refuse it, as a bounded pool does once full. */
  static final class RefusingExecutor implements Executor {
    private final Executor delegate;
    private volatile boolean refusing;

    RefusingExecutor(Executor delegate) {
      this.delegate = delegate;
    }

    void refuse() {
      refusing = true;
    }

    @Override
    public void execute(Runnable task) {
      if (refusing) {
        throw new RejectedExecutionException("refusing, as told");
      }
      delegate.execute(task);
    }
  }

  /**
   * A memory store without batches that, once stalled, answers every call only after its call
   * timeout, with a failure, as a server that stopped answering does.
   */
  static final class StallingStore extends ForwardingLeaseStore {
    final Map<String, Long> lastConfirmedStart = new ConcurrentHashMap<>();
    final AtomicInteger follows = new AtomicInteger();
    private final Duration callTimeout;
    private final CountDownLatch healed = new CountDownLatch(1);
    private volatile boolean stalled;
    private volatile Error followFailure;

    StallingStore(Duration callTimeout) {
      super(new MemoryLeaseStore());
      this.callTimeout = callTimeout;
    }

    void stall() {
      stalled = true;
    }

    void heal() {
      stalled = false;
      healed.countDown();
    }

    void followFailsWith(Error e) {
      followFailure = e;
    }

    @Override
    public int renewBatchLimit() {
      return 1;
    }

    @Override
    public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
      long start = System.nanoTime();
      answerLate(election);
      Acquisition a = super.tryAcquire(election, candidate, ttl);
      if (a.isGranted()) {
        lastConfirmedStart.put(election, start);
      }
      return a;
    }

    @Override
    public Lease renew(Lease lease) {
      long start = System.nanoTime();
      answerLate(lease.election());
      Lease renewed = super.renew(lease);
      lastConfirmedStart.put(lease.election(), start);
      return renewed;
    }

    @Override
    public void release(Lease lease) {
      answerLate(lease.election());
      super.release(lease);
    }

    @Override
    public Optional<Subscription> follow(String election, String candidate, Runnable changed) {
      follows.incrementAndGet();
      Error e = followFailure;
      if (e != null) {
        throw e;
      }
      return super.follow(election, candidate, changed);
    }

    private void answerLate(String election) {
      if (!stalled) {
        return;
      }
      try {
        healed.await(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new LeaseStoreException(election, "no answer within " + callTimeout.toMillis() + " ms");
    }
  }
}
