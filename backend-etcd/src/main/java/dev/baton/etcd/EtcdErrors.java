package dev.baton.etcd;

import io.etcd.jetcd.support.Errors;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/** Reads jetcd's and gRPC's failures, which arrive wrapped in several layers. */
final class EtcdErrors {

  private EtcdErrors() {}

  /** The call's future; a call that throws instead (jetcd does when closed) gives a failed one. */
  static <T> CompletableFuture<T> safely(Supplier<CompletableFuture<T>> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The failure without the future's wrappers. */
  static Throwable unwrap(Throwable t) {
    Throwable cause = t;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  /** etcd does not know the lease: "etcdserver: requested lease not found". */
  static boolean isLeaseNotFound(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof LeaseGoneException) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return hasMessage(t, "requested lease not found");
  }

  /**
   * etcd refused a transaction for having more operations than its {@code --max-txn-ops}:
   * "etcdserver: too many operations in txn request".
   */
  static boolean isTooManyOps(Throwable t) {
    return hasMessage(t, "too many operations in txn request");
  }

  private static boolean hasMessage(Throwable t, String text) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      String message = c.getMessage();
      if (message != null && message.contains(text)) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return false;
  }

  /**
   * The auth token expired or the auth store changed. jetcd refreshes its token when it sees this
   * on a call it retries itself; a call that is tried again afterwards authenticates afresh.
   */
  static boolean isAuthTokenError(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (Errors.isInvalidTokenError(c) || Errors.isAuthStoreExpired(c)) {
        return true;
      }
      String message = c.getMessage();
      if (message != null
          && (message.contains(Errors.INVALID_AUTH_TOKEN_ERROR_MESSAGE)
              || message.contains(Errors.ERROR_AUTH_STORE_OLD))) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return false;
  }
}
