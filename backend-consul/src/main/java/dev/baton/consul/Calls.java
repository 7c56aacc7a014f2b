package dev.baton.consul;

import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.kiwiproject.consul.ConsulException;

/**
 * Runs the client's blocking calls against one deadline per store call. The client's own timeouts
 * are per socket read, write and connect, and its failover may try several servers one after the
 * other, so only a deadline around the whole call keeps the contract that every store call returns
 * within the call timeout. A call abandoned at its deadline ends on its thread at the client's read
 * timeout; what it did (a session renewal, a lock) is judged by Consul as any late request is.
 */
final class Calls implements AutoCloseable {

  private final MonotonicClock clock;
  private final Duration callTimeout;
  private final ExecutorService executor;

  Calls(MonotonicClock clock, Duration callTimeout) {
    this.clock = clock;
    this.callTimeout = callTimeout;
    AtomicInteger n = new AtomicInteger();
    ThreadFactory threads =
        r -> {
          Thread t = new Thread(r, "baton-consul-call-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        };
    this.executor = Executors.newCachedThreadPool(threads);
  }

  /**
   * The call's result, or a {@link LeaseStoreException} saying which step failed or that Consul did
   * not answer by {@code deadline}. A {@link ConsulException} with an HTTP status is reported with
   * it; callers that expect a status (409 for a transaction whose checks failed) catch it inside
   * {@code call}.
   */
  <T> T await(Callable<T> call, long deadline, String election, String what) {
    Future<T> future;
    try {
      future = executor.submit(call);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new LeaseStoreException(election, what + ": the Consul lease store is closed", e);
    }
    try {
      return future.get(Math.max(0, deadline - clock.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      // Not interrupted: the call ends at the client's read timeout. An interrupt would fail it
      // inside the client's failover, which marks every server failed in turn.
      future.cancel(false);
      throw new LeaseStoreException(
          election, what + ": Consul did not answer within the call timeout of " + callTimeout, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof LeaseStoreException lse) {
        throw lse;
      }
      throw new LeaseStoreException(election, what + " failed: " + describe(cause), cause);
    } catch (InterruptedException e) {
      future.cancel(false);
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(election, what + ": interrupted", e);
    }
  }

  static String describe(Throwable cause) {
    if (cause instanceof ConsulException ce && ce.hasCode()) {
      return "HTTP " + ce.getCode() + " from Consul: " + ce.getMessage();
    }
    Throwable root = cause;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == cause ? cause.toString() : cause + " (" + root + ")";
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
