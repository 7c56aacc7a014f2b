package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Many candidates in threads on one in-memory store, with closes, step-downs and stalls thrown at
 * them for thousands of transitions, and user code that misbehaves: work that takes a while to
 * stop, renewals that reach the store only after the renew deadline, and {@link Error}s thrown by
 * listeners and by the work. The recorded history must show no two terms that overlapped, tokens
 * that only ever went up, and no term's work started before another candidate's had stopped (unless
 * that one's lease had run out on its own, as a stalled leader's does); a fenced register must
 * never have to refuse a write made by a term that believed itself valid; every elector's {@code
 * close()} must end it, and every {@code onElected} and every started work must be matched by its
 * {@code onRevoked} and its stop.
 */
class ElectorConcurrencyTest {

  static final int CANDIDATES = 8;
  static final int TRANSITIONS = 2000;
  static final Duration LEASE = Duration.ofMillis(80);
  static final Duration DEADLINE = Duration.ofMillis(50);
  static final Duration RETRY = Duration.ofMillis(10);

  /** One renewal in this many is held until after the renew deadline, then reaches the store. */
  static final int LATE_RENEWAL_ONE_IN = 20;

  /** One term's work in this many stops slowly, for up to {@link #SLOW_STOP}. */
  static final int SLOW_STOP_ONE_IN = 2;

  static final Duration SLOW_STOP = Duration.ofMillis(40);

  /**
   * One call in this many of the work's start and stop, and of a listener's callbacks, throws an
   * Error.
   */
  static final int ERROR_ONE_IN = 100;

  /**
   * One term as its leader saw it: from onElected to the earlier of the moment the elector ended it
   * and its validity deadline (onRevoked comes later, behind the release).
   */
  record Interval(String node, long token, long start, long end) {}

  static final class History {
    private final List<Interval> intervals = new ArrayList<>();

    synchronized void add(Interval i) {
      intervals.add(i);
    }

    synchronized List<Interval> sorted() {
      List<Interval> copy = new ArrayList<>(intervals);
      copy.sort(Comparator.comparingLong(Interval::token));
      return copy;
    }
  }

  /** Accepts a write only with a token at least as high as any accepted before. */
  static final class FencedRegister {
    private long highest;
    private int refused;

    synchronized boolean write(long token) {
      if (token < highest) {
        refused++;
        return false;
      }
      highest = token;
      return true;
    }

    synchronized int refused() {
      return refused;
    }
  }

  /**
   * An executor that can be paused as a whole, like a stopped VM: tasks wait, then run in order.
   */
  static final class PausableExecutor implements Executor {
    private final Executor delegate;
    private final Queue<Runnable> held = new ArrayDeque<>();
    private boolean paused;

    PausableExecutor(Executor delegate) {
      this.delegate = delegate;
    }

    @Override
    public void execute(Runnable task) {
      synchronized (this) {
        if (paused) {
          held.add(task);
          return;
        }
      }
      delegate.execute(task);
    }

    synchronized void pause() {
      paused = true;
    }

    void resume() {
      List<Runnable> tasks;
      synchronized (this) {
        paused = false;
        tasks = new ArrayList<>(held);
        held.clear();
      }
      tasks.forEach(delegate::execute);
    }

    synchronized boolean isPaused() {
      return paused;
    }
  }

  /** An Error from user code, planted: no elector may mistake it for one of its own. */
  static final class PlantedError extends Error {
    PlantedError(String message) {
      super("planted by the churn: " + message);
    }
  }

  static boolean oneIn(int n) {
    return ThreadLocalRandom.current().nextInt(n) == 0;
  }

  /**
   * What the store confirmed, per token: when it was granted, and until when its last confirmed
   * acquire or renewal kept it (measured from before the call, so never late).
   */
  static final class Leases {
    private final Map<Long, Long> grantedAt = new HashMap<>();
    private final Map<Long, Long> ranOutAt = new HashMap<>();

    synchronized void confirmed(Lease lease, long startNanos, boolean grant) {
      long token = lease.token().value();
      if (grant) {
        grantedAt.put(token, System.nanoTime());
      }
      ranOutAt.merge(token, startNanos + lease.ttl().toNanos(), Math::max);
    }

    synchronized long grantedAt(long token) {
      return grantedAt.getOrDefault(token, Long.MAX_VALUE);
    }

    synchronized long ranOutAt(long token) {
      return ranOutAt.getOrDefault(token, Long.MIN_VALUE);
    }
  }

  /**
   * The shared store as one candidate reaches it: one renewal in {@link #LATE_RENEWAL_ONE_IN} is
   * held until after the renew deadline and then delivered, as a slow network would, so it succeeds
   * after its term ended. Its batch limit picks the elector's direct or batched renewals.
   */
  static final class ChurnStore extends ForwardingLeaseStore {
    private final int batchLimit;
    private final Leases leases;

    ChurnStore(LeaseStore delegate, int batchLimit, Leases leases) {
      super(delegate);
      this.batchLimit = batchLimit;
      this.leases = leases;
    }

    @Override
    public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
      long t0 = System.nanoTime();
      Acquisition a = delegate().tryAcquire(election, candidate, ttl);
      a.lease().ifPresent(l -> leases.confirmed(l, t0, true));
      return a;
    }

    @Override
    public Lease renew(Lease lease) {
      arriveLateNowAndThen();
      long t0 = System.nanoTime();
      Lease renewed = delegate().renew(lease);
      leases.confirmed(renewed, t0, false);
      return renewed;
    }

    @Override
    public List<Renewal> renewAll(List<Lease> batch) {
      arriveLateNowAndThen();
      long t0 = System.nanoTime();
      List<Renewal> outcomes = delegate().renewAll(batch);
      outcomes.forEach(r -> r.lease().ifPresent(l -> leases.confirmed(l, t0, false)));
      return outcomes;
    }

    private static void arriveLateNowAndThen() {
      if (oneIn(LATE_RENEWAL_ONE_IN)) {
        // Network latency, simulated: a renewal sent a retry period after the last one arrives
        // halfway between its term's renew deadline and the end of its lease, and succeeds.
        LockSupport.parkNanos(
            DEADLINE.minus(RETRY).plus(LEASE.minus(DEADLINE).dividedBy(2)).toNanos());
      }
    }

    @Override
    public int renewBatchLimit() {
      return batchLimit;
    }

    @Override
    public void close() {}
  }

  /** When each term's work ran: started, and stopped (0 while it runs). */
  record Work(String node, long token, long start, long stop) {}

  /**
   * Leader work that now and then stops slowly (up to {@link #SLOW_STOP}) or throws an Error when
   * started or stopped, and records when it ran.
   */
  static final class ChurnWork implements TermWork {
    private final String node;
    private final Map<Long, Work> runs;

    ChurnWork(String node, Map<Long, Work> runs) {
      this.node = node;
      this.runs = runs;
    }

    @Override
    public AutoCloseable start(Term term) {
      long token = term.token().value();
      if (oneIn(ERROR_ONE_IN)) {
        throw new PlantedError(node + "'s work failed to start for token " + token);
      }
      runs.put(token, new Work(node, token, System.nanoTime(), 0));
      long stopFor =
          oneIn(SLOW_STOP_ONE_IN) ? ThreadLocalRandom.current().nextLong(SLOW_STOP.toNanos()) : 0;
      boolean failToStop = oneIn(ERROR_ONE_IN);
      return () -> {
        // Work that winds down for a while (flushes, drains a queue).
        long until = System.nanoTime() + stopFor;
        for (long left; (left = until - System.nanoTime()) > 0; ) {
          LockSupport.parkNanos(left);
        }
        runs.computeIfPresent(token, (t, w) -> new Work(w.node(), t, w.start(), System.nanoTime()));
        if (failToStop) {
          throw new PlantedError(node + "'s work failed to stop for token " + token);
        }
      };
    }
  }

  /** A listener that now and then throws an Error from onElected or onRevoked. */
  static ElectionListener throwingListener(String node) {
    return new ElectionListener() {
      @Override
      public void onElected(Term term) {
        if (oneIn(ERROR_ONE_IN)) {
          throw new PlantedError(
              node + "'s listener failed in onElected for token " + term.token());
        }
      }

      @Override
      public void onRevoked(Term term) {
        if (oneIn(ERROR_ONE_IN)) {
          throw new PlantedError(
              node + "'s listener failed in onRevoked for token " + term.token());
        }
      }
    };
  }

  /** Terms told to a listener: every onElected must get its onRevoked. */
  static final class Told {
    final AtomicInteger elected = new AtomicInteger();
    final AtomicInteger revoked = new AtomicInteger();
  }

  @Test
  @DisplayName(
      "thousands of closes, step-downs, stalls, late renewals, slow stops and Errors never let two terms or their work overlap")
  void noOverlappingTermsUnderChurn() {
    MemoryLeaseStore store = new MemoryLeaseStore();
    History history = new History();
    FencedRegister register = new FencedRegister();
    Leases leases = new Leases();
    Map<Long, Work> runs = new ConcurrentHashMap<>();
    List<String> problems = new CopyOnWriteArrayList<>();
    AtomicInteger elected = new AtomicInteger();
    AtomicInteger staleWritesSkipped = new AtomicInteger();
    AtomicLong faults = new AtomicLong();
    ExecutorService pool = Executors.newCachedThreadPool();
    ScheduledExecutorService timers = Executors.newScheduledThreadPool(2);
    ScheduledExecutorService chaos = Executors.newSingleThreadScheduledExecutor();
    List<Elector> electors = new ArrayList<>();
    List<PausableExecutor> executors = new ArrayList<>();
    List<Told> told = new ArrayList<>();
    try {
      for (int i = 0; i < CANDIDATES; i++) {
        String node = "node-" + i;
        PausableExecutor executor = new PausableExecutor(pool);
        executors.add(executor);
        Told t = new Told();
        told.add(t);
        // Half renew one by one, half in batches.
        LeaseStore reach = new ChurnStore(store, i % 2 == 0 ? 1 : store.renewBatchLimit(), leases);
        Elector e =
            Elector.builder(reach)
                .election("churn")
                .candidate(node)
                .leaseDuration(LEASE)
                .renewDeadline(DEADLINE)
                .retryPeriod(RETRY)
                .scheduler(timers)
                .executor(executor)
                .ownPool(executor)
                .listener(throwingListener(node))
                .whileLeader(new ChurnWork(node, runs))
                .listener(
                    new ElectionListener() {
                      long start;

                      @Override
                      public void onElected(Term term) {
                        start = System.nanoTime();
                        t.elected.incrementAndGet();
                        elected.incrementAndGet();
                        // Leader work checks its term before acting, as users must.
                        if (term.isValid()) {
                          register.write(term.token().value());
                        } else {
                          staleWritesSkipped.incrementAndGet();
                        }
                      }

                      @Override
                      public void onRevoked(Term term) {
                        t.revoked.incrementAndGet();
                        long end = term.lastValidNanos();
                        history.add(new Interval(node, term.token().value(), start, end));
                      }
                    })
                .build();
        electors.add(e);
        e.start();
      }

      chaos.scheduleWithFixedDelay(
          () -> {
            int i = ThreadLocalRandom.current().nextInt(CANDIDATES);
            Elector e = electors.get(i);
            PausableExecutor executor = executors.get(i);
            if (executor.isPaused()) {
              return;
            }
            faults.incrementAndGet();
            switch (ThreadLocalRandom.current().nextInt(4)) {
              case 0:
                e.stepDown();
                break;
              case 1:
                e.close();
                awaitStopped(e, problems);
                e.start();
                break;
              case 2:
                executor.pause();
                chaos.schedule(executor::resume, LEASE.toMillis() * 2, TimeUnit.MILLISECONDS);
                break;
              default:
                electors.stream()
                    .filter(Elector::isLeader)
                    .findFirst()
                    .ifPresent(Elector::stepDown);
            }
          },
          0,
          3,
          TimeUnit.MILLISECONDS);

      // The Errors the churn plants may escape to pool threads; what the elector did is checked
      // below.
      await("until " + TRANSITIONS + " grants, or a problem")
          .atMost(Duration.ofSeconds(120))
          .dontCatchUncaughtExceptions()
          .until(() -> elected.get() >= TRANSITIONS || !problems.isEmpty());
      assertThat(problems).as("problems seen during the churn").isEmpty();
    } finally {
      // Let a fault under way finish first: one that closed and restarts an elector would
      // otherwise start it again after the loop below has closed it.
      chaos.shutdown();
      if (!awaitTermination(chaos)) {
        problems.add("the churn's last fault still running 10 s after the churn stopped");
      }
      executors.forEach(PausableExecutor::resume);
      electors.forEach(
          e -> {
            e.close();
            awaitStopped(e, problems);
          });
      timers.shutdownNow();
      pool.shutdownNow();
    }

    assertThat(problems)
        .as("electors still running after close(), or a fault still under way")
        .isEmpty();
    assertThat(electors)
        .as("electors running when their callbacks are counted")
        .noneMatch(Elector::isRunning);
    for (int i = 0; i < CANDIDATES; i++) {
      assertThat(told.get(i).revoked.get())
          .as("onRevoked calls of node-%d, after %d onElected", i, told.get(i).elected.get())
          .isEqualTo(told.get(i).elected.get());
    }
    List<Interval> terms = history.sorted();
    assertThat(terms.size()).isGreaterThan(TRANSITIONS / 2);
    for (int i = 1; i < terms.size(); i++) {
      Interval before = terms.get(i - 1);
      Interval after = terms.get(i);
      assertThat(after.token()).as("tokens strictly increase").isGreaterThan(before.token());
      if (before.end() > before.start()) {
        assertThat(before.end())
            .as(
                "term %s of %s must end before term %s of %s starts",
                before.token(), before.node(), after.token(), after.node())
            .isLessThanOrEqualTo(after.start());
      }
    }
    assertThat(runs.values()).as("work that never stopped").allMatch(w -> w.stop() != 0);
    assertThat(workOverlaps(runs, leases))
        .as("work of one term still running when another candidate's began")
        .isEmpty();
    assertThat(register.refused()).as("writes refused by the fenced register").isZero();
    System.out.printf(
        "churn: %d grants, %d terms checked, %d works run, %d faults, %d stale onElected skipped their work%n",
        elected.get(), terms.size(), runs.size(), faults.get(), staleWritesSkipped.get());
  }

  private static boolean awaitTermination(ScheduledExecutorService chaos) {
    try {
      return chaos.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * close() waits a lease and a deadline at most; a busy machine gets longer before it counts as
   * stuck.
   */
  private static void awaitStopped(Elector e, List<String> problems) {
    if (!e.isRunning()) {
      return;
    }
    try {
      await()
          .atMost(Duration.ofSeconds(5))
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(5))
          .dontCatchUncaughtExceptions()
          .until(() -> !e.isRunning());
    } catch (ConditionTimeoutException x) {
      problems.add(e.candidate() + " still running 5 s after close() returned: " + e);
    }
  }

  /**
   * Pairs of works of different candidates where the later term's work started before the earlier
   * one's stopped, while the earlier term's lease had not run out on its own when the later was
   * granted: the earlier leader gave its lease up before its work stopped.
   */
  private static List<String> workOverlaps(Map<Long, Work> runs, Leases leases) {
    List<Work> all = new ArrayList<>(runs.values());
    all.sort(Comparator.comparingLong(Work::token));
    List<String> overlaps = new ArrayList<>();
    for (int i = 0; i < all.size(); i++) {
      Work before = all.get(i);
      long stopped = before.stop() == 0 ? Long.MAX_VALUE : before.stop();
      for (int j = i + 1; j < all.size(); j++) {
        Work after = all.get(j);
        if (after.node().equals(before.node()) || after.start() - stopped >= 0) {
          continue;
        }
        long granted = leases.grantedAt(after.token());
        long ranOut = leases.ranOutAt(before.token());
        if (granted - ranOut < 0) {
          overlaps.add(
              String.format(
                  "%s's work for token %d ran until %.1f ms after %s was granted token %d, %.1f ms before %s's lease would have run out",
                  before.node(),
                  before.token(),
                  (stopped - granted) / 1e6,
                  after.node(),
                  after.token(),
                  (ranOut - granted) / 1e6,
                  before.node()));
        }
      }
    }
    return overlaps;
  }
}
