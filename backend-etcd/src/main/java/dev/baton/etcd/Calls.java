package dev.baton.etcd;

import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Waits for jetcd's futures against one deadline per store call, so that a call with several steps
 * still returns within the call timeout, and turns what went wrong into {@link
 * LeaseStoreException}s that say which step it was.
 */
final class Calls {

  private final MonotonicClock clock;
  private final Duration callTimeout;

  Calls(MonotonicClock clock, Duration callTimeout) {
    this.clock = clock;
    this.callTimeout = callTimeout;
  }

  <T> T await(CompletableFuture<T> future, long deadline, String election, String what) {
    try {
      return future.get(Math.max(0, deadline - clock.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new LeaseStoreException(
          election, what + ": etcd did not answer within the call timeout of " + callTimeout, e);
    } catch (ExecutionException e) {
      Throwable cause = EtcdErrors.unwrap(e);
      throw new LeaseStoreException(election, what + " failed: " + cause.getMessage(), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(election, what + ": interrupted", e);
    }
  }

  /** Waits until both are done or the deadline passed; the caller inspects each. */
  void awaitBoth(CompletableFuture<?> a, CompletableFuture<?> b, long deadline, String election) {
    try {
      CompletableFuture.allOf(a, b)
          .get(Math.max(0, deadline - clock.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // Each future's own outcome is read and reported by the caller.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(election, "interrupted", e);
    }
  }

  /** The failure of a future that is done, without waiting. */
  static Throwable failure(CompletableFuture<?> done) {
    try {
      done.getNow(null);
      return null;
    } catch (RuntimeException e) {
      return EtcdErrors.unwrap(e);
    }
  }

  /**
   * One more try when the auth token expired. jetcd refreshes its token when it sees the error,
   * even when its own retries are switched off; the request was refused before being applied, so
   * sending it again is safe.
   */
  static <T> CompletableFuture<T> retryingAuth(Supplier<CompletableFuture<T>> call) {
    return EtcdErrors.safely(call)
        .exceptionallyCompose(
            e ->
                EtcdErrors.isAuthTokenError(e)
                    ? EtcdErrors.safely(call)
                    : CompletableFuture.failedFuture(e));
  }
}
