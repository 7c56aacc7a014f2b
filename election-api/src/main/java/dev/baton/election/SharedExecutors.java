package dev.baton.election;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every elector in the process shares: one timer thread (unless the caller supplies a
 * scheduler), and a pool whose threads exist only while there is work (it grows with calls in
 * flight, not with the number of electors) for the electors' own steps and their blocking store
 * calls, always, and for their callbacks unless the caller supplies an executor. That pool queues
 * nothing, so a step-down never waits behind a store call that hangs.
 */
final class SharedExecutors {

  private SharedExecutors() {}

  private static final class Scheduler {
    static final ScheduledExecutorService INSTANCE = create();

    private static ScheduledExecutorService create() {
      ScheduledThreadPoolExecutor executor =
          new ScheduledThreadPoolExecutor(1, daemon("baton-scheduler"));
      executor.setRemoveOnCancelPolicy(true);
      return executor;
    }
  }

  private static final class Worker {
    static final Executor INSTANCE =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            daemon("baton-worker"));
  }

  static ScheduledExecutorService scheduler() {
    return Scheduler.INSTANCE;
  }

  static Executor worker() {
    return Worker.INSTANCE;
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
