package dev.baton.zookeeper;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.baton.election.LeaseStoreException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.zookeeper.KeeperException;

/**
 * The answer to one asynchronous ZooKeeper request, waited for no longer than the call's deadline.
 *
 * <p>ZooKeeper may still apply a request after its caller stopped waiting (it was queued while the
 * client reconnected). An answer that arrives too late is refused by {@link #answer}, so whoever
 * sent a write can undo it instead of leaving a grant nobody knows about.
 */
final class Reply<T> {

  private final CompletableFuture<T> future = new CompletableFuture<>();

  /** Delivers the answer; false when the waiter already gave up on it. */
  boolean answer(T value) {
    return future.complete(value);
  }

  /** Delivers ZooKeeper's error code; false when the waiter already gave up on it. */
  boolean fail(int resultCode, String path) {
    return future.completeExceptionally(
        KeeperException.create(KeeperException.Code.get(resultCode), path));
  }

  /**
   * Waits until {@code deadline} for the answer.
   *
   * @throws KeeperException the error ZooKeeper answered with
   * @throws LeaseStoreException when no answer came in time or the thread was interrupted
   */
  T await(CallDeadline deadline, String election, String what) throws KeeperException {
    try {
      return future.get(deadline.leftNanos(), NANOSECONDS);
    } catch (TimeoutException e) {
      if (giveUp()) {
        throw new LeaseStoreException(
            election,
            what
                + ": no answer from ZooKeeper within the call timeout ("
                + deadline.callTimeout()
                + ")",
            e);
      }
      return settled(election, what);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (giveUp()) {
        throw new LeaseStoreException(
            election, what + ": interrupted while waiting for ZooKeeper", e);
      }
      return settled(election, what);
    } catch (ExecutionException e) {
      throw keeperException(e.getCause(), election, what);
    }
  }

  /** The answer that arrived between the timeout and giving up: it counts. */
  private T settled(String election, String what) throws KeeperException {
    try {
      return future.getNow(null);
    } catch (CompletionException e) {
      throw keeperException(e.getCause(), election, what);
    }
  }

  private boolean giveUp() {
    return future.completeExceptionally(new CancellationException("the caller stopped waiting"));
  }

  private static KeeperException keeperException(Throwable cause, String election, String what) {
    if (cause instanceof KeeperException) {
      return (KeeperException) cause;
    }
    throw new LeaseStoreException(election, what + " failed", cause);
  }
}
