package dev.baton.election;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared executor: an elector's state is
 * confined to one of these instead of a thread of its own, and its listener callbacks come in order
 * through another.
 *
 * <p>Two promises the elector's safety rests on. A task that throws anything, an {@code Error}
 * included, is logged and the tasks behind it still run: otherwise one {@code AssertionError} in a
 * listener would leave the queue stopped for good, and no later {@code onRevoked} (the work never
 * stops) or release would ever run. And when the executor refuses the hand-off (a bounded queue
 * that is full, a pool shut down, no thread to be had), the caller runs the queue itself: a leader
 * must still be able to step down by its deadline when its executor takes no more work.
 *
 * <p>A fallback executor, when given, takes the queue before the calling thread does: the caller
 * may be the one timer thread every elector shares, and a slow callback run there would hold up the
 * deadlines of all the others.
 */
final class SerialExecutor implements Executor {

  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

  private final Executor delegate;
  private final Executor fallback;
  private final Queue<Runnable> tasks = new ArrayDeque<>();
  private boolean draining;

  /**
   * The id of the thread running our tasks now, 0 when none. An id rather than the Thread: every
   * renewal of every election passes through here, and a reference stored into this long-lived
   * object would cost the collector a card to scan each time (a long costs it nothing).
   */
  private volatile long runnerId;

  private volatile boolean refusalReported;

  /**
   * The id of the thread that has promised to run what it queues once it is done with its current
   * task (see {@link #hold}), 0 when none; {@code held} says such work is waiting for it.
   */
  private final AtomicLong holderId = new AtomicLong();

  private boolean held;

  /** What {@link #runAfterHeld} left for the holding thread; only that thread touches it. */
  private Runnable afterHeld;

  SerialExecutor(Executor delegate) {
    this(delegate, null);
  }

  /** Runs on {@code delegate}; on {@code fallback} when it refuses, and only then on the caller. */
  SerialExecutor(Executor delegate, Executor fallback) {
    this.delegate = delegate;
    this.fallback = fallback == delegate ? null : fallback;
  }

  @Override
  public void execute(Runnable task) {
    synchronized (tasks) {
      tasks.add(task);
      if (draining) {
        return;
      }
      draining = true;
      if (holderId.get() == Thread.currentThread().getId()) {
        held = true;
        return;
      }
    }
    try {
      delegate.execute(this::drain);
    } catch (RejectedExecutionException | OutOfMemoryError refused) {
      drainElsewhere(refused);
    }
  }

  private void drainElsewhere(Throwable refused) {
    if (fallback != null) {
      try {
        fallback.execute(this::drain);
        reportRefusal(refused, "running it on the elector's own pool");
        return;
      } catch (RejectedExecutionException | OutOfMemoryError alsoRefused) {
        refused = alsoRefused;
      }
    }
    reportRefusal(refused, "running it on the calling thread");
    drain(null);
  }

  private void reportRefusal(Throwable refused, String instead) {
    if (!refusalReported) {
      refusalReported = true;
      log.warn("The elector's executor refused a task ({}); {}", refused.toString(), instead);
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

  /**
   * Until {@link #runHeld} on this thread, tasks this thread submits are queued and left for it to
   * run then, instead of waking another thread for them. For a pool thread that is about to finish
   * its task and would otherwise wake a second one for the work its last steps queued: a grant's
   * {@code onElected} comes a thread wake-up sooner. Only for a thread that goes on to call {@link
   * #runHeld} straight after (in a {@code finally}), and does nothing long before it: what it holds
   * waits for it. One thread holds at a time: false, and nothing held, when another does (two store
   * calls of one elector can end together) or this one already does.
   */
  boolean hold() {
    return holderId.compareAndSet(0, Thread.currentThread().getId());
  }

  /**
   * Ends a {@link #hold} that returned true and runs on this thread what was held for it, and what
   * follows it; does nothing after one that returned false.
   */
  void runHeld(boolean holding) {
    if (!holding) {
      return;
    }
    // Taken before the hold ends: the next holder may leave a task of its own.
    Runnable after = afterHeld;
    afterHeld = null;
    holderId.set(0);
    boolean mustDrain;
    synchronized (tasks) {
      mustDrain = held;
      held = false;
    }
    if (mustDrain) {
      drain(null);
    }
    if (after != null) {
      after.run();
    }
  }

  /**
   * Leaves {@code task} to this thread, to run once {@link #runHeld} has run what it holds, after
   * the tasks left before it: true when this thread holds; false otherwise, and the caller runs the
   * task its own way. For a short task that must not come before the held ones and is not worth
   * waking a thread for (a grant closes the follower's watch and opens the leader's this way).
   */
  boolean runAfterHeld(Runnable task) {
    if (holderId.get() != Thread.currentThread().getId()) {
      return false;
    }
    Runnable before = afterHeld;
    afterHeld =
        before == null
            ? task
            : () -> {
              try {
                before.run();
              } finally {
                task.run();
              }
            };
    return true;
  }

  /** True when called from the task this executor is running now. */
  boolean inTask() {
    return runnerId == Thread.currentThread().getId();
  }

  private void drain() {
    drain(null);
  }

  /** Runs {@code first} (when given), then what is queued, until nothing is. */
  private void drain(Runnable first) {
    long previous = runnerId;
    runnerId = Thread.currentThread().getId();
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
        } catch (Throwable e) {
          // Contained whatever it is: the tasks behind it (an onRevoked, a release) must still run.
          log.error("Unexpected failure in an elector task; the tasks behind it still run", e);
        }
        task = null;
      }
    } finally {
      runnerId = previous;
    }
  }
}
