package dev.baton.election;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Ends a leader's term when its renew deadline passes. A renewal only moves the deadline in the
 * term; this timer, finding it moved, sets itself again on the timer thread (so renewals cause no
 * timer churn and no hand-offs to the engine), or, when it only guards a stretch of trouble, ends:
 * for a batched leader the batcher watches the deadline again once renewals go through. A timer
 * that wakes on the grid before a deadline that has not moved always sets itself again: the trouble
 * it guards is not over.
 */
final class DeadlineTimer implements Runnable {

  private final Leading leading;
  private final Campaign c;
  private final boolean rearm;
  private volatile boolean cancelled;
  private volatile ScheduledFuture<?> future;

  /** The deadline this timer was last set for. */
  private volatile long armedFor;

  DeadlineTimer(Leading leading, boolean rearm) {
    this.leading = leading;
    this.c = leading.campaign();
    this.rearm = rearm;
    arm();
  }

  private void arm() {
    long now = c.clock.nanoTime();
    long due = leading.term().validUntilNanos();
    armedFor = due;
    long grid = c.renewSlack();
    if (due - now > grid) {
      // Far from due: wake a little early on a grid shared with the other leaders, so the timer
      // thread serves many of them per wake-up; the last stretch is timed exactly.
      due -= Math.floorMod(due, grid);
    }
    future = c.scheduler.schedule(this, Math.max(0, due - now), TimeUnit.NANOSECONDS);
    // cancel() may have read the previous future.
    if (cancelled) {
      future.cancel(false);
    }
  }

  @Override
  public void run() {
    if (cancelled) {
      return;
    }
    long validUntil = leading.term().validUntilNanos();
    if (validUntil - c.clock.nanoTime() > 0) {
      if (rearm || validUntil == armedFor) {
        try {
          arm();
        } catch (RejectedExecutionException e) {
          c.engine.execute(() -> leading.timerRefused(this, e));
        }
      } else {
        c.engine.execute(() -> leading.deadlineTimerEnded(this));
      }
      return;
    }
    c.engine.execute(() -> leading.deadlineDue(this));
  }

  /**
   * On the engine: the deadline this timer found passed was moved on by a renewal applied between
   * its look and now. Without a timer for the moved deadline, a renewal that then hangs would keep
   * the term going until its call returns.
   */
  void deadlineMoved() {
    if (rearm) {
      arm();
    } else {
      leading.deadlineTimerEnded(this);
    }
  }

  void cancel() {
    cancelled = true;
    ScheduledFuture<?> f = future;
    if (f != null) {
      f.cancel(false);
    }
  }
}
