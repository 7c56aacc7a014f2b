package dev.baton.election;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real thread pool that knows how many of its tasks are queued or running, so that a test can
 * wait until the engine has done all it is going to do (everything but a task the test itself holds
 * blocked), and then check that something did not happen. It can also be told to refuse work, as a
 * bounded or shut-down executor does.
 */
final class QuiescentPool implements Executor, AutoCloseable {

  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final AtomicInteger active = new AtomicInteger();
  volatile boolean refusing;
  final AtomicInteger refused = new AtomicInteger();

  @Override
  public void execute(Runnable task) {
    if (refusing) {
      refused.incrementAndGet();
      throw new RejectedExecutionException("refusing work (scripted)");
    }
    active.incrementAndGet();
    pool.execute(
        () -> {
          try {
            task.run();
          } finally {
            active.decrementAndGet();
          }
        });
  }

  /** Tasks handed to this pool and not finished yet. */
  int active() {
    return active.get();
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
