package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs an action if a call is still going at its deadline, for the blocking a socket timeout cannot
 * end: Java sockets have no write timeout, so a call whose request fills the socket buffers of a
 * link that stopped acknowledging blocks until TCP gives up, many minutes later. Backends arm one
 * around such a call and abort its connection when it goes off.
 *
 * <p>Shares the process's one timer thread; the action runs on a pool thread, since aborting a
 * connection can itself block. Disarming and going off exclude each other: after {@link #disarm()}
 * returns true the action never runs.
 */
public final class DeadlineAlarm implements AutoCloseable {

  private static final int ARMED = 0;
  private static final int DISARMED = 1;
  private static final int WENT_OFF = 2;

  private final AtomicInteger state = new AtomicInteger(ARMED);
  private final ScheduledFuture<?> timer;

  private DeadlineAlarm(long delayNanos, Runnable action) {
    this.timer =
        SharedExecutors.scheduler()
            .schedule(
                () -> {
                  if (state.compareAndSet(ARMED, WENT_OFF)) {
                    SharedExecutors.worker().execute(action);
                  }
                },
                delayNanos,
                TimeUnit.NANOSECONDS);
  }

  /**
   * Runs {@code action} once {@code deadlineNanos} on {@code clock} has passed, unless disarmed
   * first.
   */
  public static DeadlineAlarm arm(MonotonicClock clock, long deadlineNanos, Runnable action) {
    requireNonNull(clock, "clock");
    requireNonNull(action, "action");
    return new DeadlineAlarm(Math.max(0, deadlineNanos - clock.nanoTime()), action);
  }

  /** Stops the alarm; false when it went off already (its action has run or is running). */
  public boolean disarm() {
    if (state.compareAndSet(ARMED, DISARMED)) {
      timer.cancel(false);
      return true;
    }
    return state.get() == DISARMED;
  }

  /** Whether the alarm went off: the call outlasted its deadline and its action ran. */
  public boolean wentOff() {
    return state.get() == WENT_OFF;
  }

  /** Disarms. */
  @Override
  public void close() {
    disarm();
  }
}
