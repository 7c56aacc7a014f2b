package dev.baton.election;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler on a {@link FakeClock}: tasks run only when the test advances time past their due
 * time, in due order, with the clock set to each task's due time as it runs.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {

  private final FakeClock clock;
  private final List<Task> tasks = new ArrayList<>();
  private long sequence;

  /** When set, new tasks are refused, as by a scheduler shut down; those set before still run. */
  volatile boolean refusing;

  ManualScheduler(FakeClock clock) {
    this.clock = clock;
  }

  final class Task implements ScheduledFuture<Object> {
    final long due;
    final long order = sequence++;
    final Runnable body;
    boolean cancelled;
    boolean done;

    Task(long due, Runnable body) {
      this.due = due;
      this.body = body;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(due - clock.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterrupt) {
      synchronized (ManualScheduler.this) {
        if (done) {
          return false;
        }
        cancelled = true;
        tasks.remove(this);
        return true;
      }
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public boolean isDone() {
      return done || cancelled;
    }

    @Override
    public Object get() {
      throw new UnsupportedOperationException();
    }

    @Override
    public Object get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }
  }

  /** Moves time forward by {@code d}, running every task that falls due on the way. */
  void advance(Duration d) {
    long target = clock.nanoTime() + d.toNanos();
    while (true) {
      Task next;
      synchronized (this) {
        next =
            tasks.stream()
                .filter(t -> t.due - target <= 0)
                .min(Comparator.<Task>comparingLong(t -> t.due).thenComparingLong(t -> t.order))
                .orElse(null);
        if (next == null) {
          break;
        }
        tasks.remove(next);
        next.done = true;
      }
      if (next.due - clock.nanoTime() > 0) {
        clock.set(next.due);
      }
      next.body.run();
    }
    if (target - clock.nanoTime() > 0) {
      clock.set(target);
    }
  }

  /** Runs what is due now without moving time. */
  void runDue() {
    advance(Duration.ZERO);
  }

  synchronized int pending() {
    return tasks.size();
  }

  /** Time until the earliest pending task, or empty when none. */
  synchronized java.util.Optional<Duration> nextDelay() {
    return tasks.stream().mapToLong(t -> t.due - clock.nanoTime()).min().stream()
        .boxed()
        .findFirst()
        .map(Duration::ofNanos);
  }

  @Override
  public synchronized ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    if (refusing) {
      throw new java.util.concurrent.RejectedExecutionException("shut down (scripted)");
    }
    Task t = new Task(clock.nanoTime() + unit.toNanos(Math.max(0, delay)), command);
    tasks.add(t);
    return t;
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable command, long initialDelay, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void execute(Runnable command) {
    schedule(command, 0, TimeUnit.NANOSECONDS);
  }

  @Override
  public void shutdown() {}

  @Override
  public List<Runnable> shutdownNow() {
    return List.of();
  }

  @Override
  public boolean isShutdown() {
    return false;
  }

  @Override
  public boolean isTerminated() {
    return false;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return true;
  }
}
