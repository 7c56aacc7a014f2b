package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Many candidates in threads on one in-memory store, with closes, step-downs and stalls thrown
 * at them for thousands of transitions. The recorded history must show no two terms that
 * overlapped and tokens that only ever went up; a fenced register must never have to refuse a
 * write made by a term that believed itself valid.
 */
class ElectorConcurrencyTest {

  static final int CANDIDATES = 8;
  static final int TRANSITIONS = 2000;
  static final Duration LEASE = Duration.ofMillis(80);
  static final Duration DEADLINE = Duration.ofMillis(50);
  static final Duration RETRY = Duration.ofMillis(10);

  /**
   * One term as its leader saw it: from onElected to the earlier of the moment the elector ended
   * it and its validity deadline (onRevoked comes later, behind the release).
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

  /** An executor that can be paused as a whole, like a stopped VM: tasks wait, then run in order. */
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

  @Test
  @DisplayName("thousands of closes, step-downs and stalls never give two overlapping terms")
  void noOverlappingTermsUnderChurn() {
    MemoryLeaseStore store = new MemoryLeaseStore();
    History history = new History();
    FencedRegister register = new FencedRegister();
    AtomicInteger elected = new AtomicInteger();
    AtomicInteger staleWritesSkipped = new AtomicInteger();
    AtomicLong faults = new AtomicLong();
    ExecutorService pool = Executors.newCachedThreadPool();
    ScheduledExecutorService timers = Executors.newScheduledThreadPool(2);
    ScheduledExecutorService chaos = Executors.newSingleThreadScheduledExecutor();
    List<Elector> electors = new ArrayList<>();
    List<PausableExecutor> executors = new ArrayList<>();
    try {
      for (int i = 0; i < CANDIDATES; i++) {
        String node = "node-" + i;
        PausableExecutor executor = new PausableExecutor(pool);
        executors.add(executor);
        Elector e =
            Elector.builder(store)
                .election("churn")
                .candidate(node)
                .leaseDuration(LEASE)
                .renewDeadline(DEADLINE)
                .retryPeriod(RETRY)
                .scheduler(timers)
                .executor(executor)
                .listener(
                    new ElectionListener() {
                      long start;

                      @Override
                      public void onElected(Term term) {
                        start = System.nanoTime();
                        elected.incrementAndGet();
                        // Leader work checks its term before acting, as users must.
                        if (term.isValid()) {
                          assertThat(register.write(term.token().value())).isTrue();
                        } else {
                          staleWritesSkipped.incrementAndGet();
                        }
                      }

                      @Override
                      public void onRevoked(Term term) {
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
                e.start();
                break;
              case 2:
                executor.pause();
                chaos.schedule(executor::resume, LEASE.toMillis() * 2, TimeUnit.MILLISECONDS);
                break;
              default:
                electors.stream().filter(Elector::isLeader).findFirst().ifPresent(Elector::stepDown);
            }
          },
          0,
          3,
          TimeUnit.MILLISECONDS);

      await().atMost(Duration.ofSeconds(120)).until(() -> elected.get() >= TRANSITIONS);
    } finally {
      chaos.shutdownNow();
      executors.forEach(PausableExecutor::resume);
      electors.forEach(Elector::close);
      timers.shutdownNow();
      pool.shutdownNow();
    }

    List<Interval> terms = history.sorted();
    assertThat(terms.size()).isGreaterThan(TRANSITIONS / 2);
    for (int i = 1; i < terms.size(); i++) {
      Interval before = terms.get(i - 1);
      Interval after = terms.get(i);
      assertThat(after.token()).as("tokens strictly increase").isGreaterThan(before.token());
      if (before.end() > before.start()) {
        assertThat(before.end())
            .as("term %s of %s must end before term %s of %s starts", before.token(), before.node(), after.token(), after.node())
            .isLessThanOrEqualTo(after.start());
      }
    }
    assertThat(register.refused()).as("writes refused by the fenced register").isZero();
    System.out.printf(
        "churn: %d grants, %d terms checked, %d faults, %d stale onElected skipped their work%n",
        elected.get(), terms.size(), faults.get(), staleWritesSkipped.get());
  }
}
