package dev.baton.conformance;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An executor that can be stalled like a paused process: while paused, tasks queue instead of
 * running (tasks already running finish); on resume they run in the order they came.
 */
final class PausableExecutor implements Executor, AutoCloseable {

  private final ExecutorService pool;
  private final List<Runnable> held = new ArrayList<>();
  private boolean paused;

  PausableExecutor(String threadPrefix) {
    AtomicInteger count = new AtomicInteger();
    this.pool =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, threadPrefix + "-" + count.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
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
      paused = true;
    }
  }

  void resume() {
    synchronized (held) {
      // Under the lock, so nothing submitted after the resume overtakes what was queued.
      held.forEach(pool::execute);
      held.clear();
      paused = false;
    }
  }

  @Override
  public void close() {
    resume();
    pool.shutdown();
  }
}
