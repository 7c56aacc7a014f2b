package dev.baton.conformance;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An executor that can be stalled like a paused process: while paused, tasks queue instead of
 * running (tasks already running finish); on resume they run in the order they came. Its {@link
 * #timer()} stalls with it: an elector runs its own steps and store calls on Baton's pool, so a
 * paused process is an elector whose callbacks and timers both stand still.
 */
final class PausableExecutor implements Executor, AutoCloseable {

  private final ExecutorService pool;
  private final ScheduledExecutorService timer;
  private final List<Runnable> held = new ArrayList<>();
  private boolean paused;
  private CountDownLatch timerStalled;

  PausableExecutor(String threadPrefix) {
    this.pool = Executors.newCachedThreadPool(daemons(threadPrefix));
    this.timer = Executors.newSingleThreadScheduledExecutor(daemons(threadPrefix + "-timer"));
  }

  private static ThreadFactory daemons(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * A timer thread of its own that stalls while this executor is paused: an elector's scheduler.
   */
  ScheduledExecutorService timer() {
    return timer;
  }

  @Override
  public void execute(Runnable task) {
    synchronized (held) {
      if (paused) {
        held.add(task);
        return;
      }
    }
    pool.execute(task);
  }

  void pause() {
    synchronized (held) {
      if (paused) {
        return;
      }
      paused = true;
      // The timer thread waits here: every timer due meanwhile fires, late, on resume.
      CountDownLatch stalled = new CountDownLatch(1);
      timerStalled = stalled;
      timer.execute(
          () -> {
            try {
              stalled.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
    }
  }

  void resume() {
    synchronized (held) {
      // Under the lock, so nothing submitted after the resume overtakes what was queued.
      held.forEach(pool::execute);
      held.clear();
      paused = false;
      if (timerStalled != null) {
        timerStalled.countDown();
        timerStalled = null;
      }
    }
  }

  @Override
  public void close() {
    resume();
    pool.shutdown();
    timer.shutdown();
  }
}
