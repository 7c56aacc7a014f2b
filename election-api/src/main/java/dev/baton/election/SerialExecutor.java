package dev.baton.election;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared executor: an elector's state is
 * confined to one of these instead of a thread of its own, and its listener callbacks come in
 * order through another.
 */
final class SerialExecutor implements Executor {

  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

  private final Executor delegate;
  private final Queue<Runnable> tasks = new ArrayDeque<>();
  private boolean draining;
  private volatile Thread runner;

  SerialExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable task) {
    boolean start;
    synchronized (tasks) {
      tasks.add(task);
      start = !draining;
      draining = true;
    }
    if (start) {
      try {
        delegate.execute(this::drain);
      } catch (RuntimeException e) {
        synchronized (tasks) {
          draining = false;
        }
        throw e;
      }
    }
  }

  /**
   * Runs {@code task} on the calling thread when nothing of ours is running or waiting, else queues
   * it behind the others. For callers that are already on a pool thread and would otherwise hand
   * the task to another one: each such hand-off is a thread wake-up on the path it sits on.
   */
  void runOrExecute(Runnable task) {
    synchronized (tasks) {
      if (draining) {
        tasks.add(task);
        return;
      }
      draining = true;
    }
    drain(task);
  }

  /** True when called from the task this executor is running now. */
  boolean inTask() {
    return runner == Thread.currentThread();
  }

  private void drain() {
    drain(null);
  }

  /** Runs {@code first} (when given), then what is queued, until nothing is. */
  private void drain(Runnable first) {
    Thread previous = runner;
    runner = Thread.currentThread();
    try {
      Runnable task = first;
      while (true) {
        if (task == null) {
          synchronized (tasks) {
            task = tasks.poll();
            if (task == null) {
              draining = false;
              return;
            }
          }
        }
        try {
          task.run();
        } catch (RuntimeException e) {
          // A task of ours that throws is a bug, but it must not stop the ones behind it.
          log.error("Unexpected failure in an elector task", e);
        }
        task = null;
      }
    } finally {
      runner = previous;
    }
  }
}
