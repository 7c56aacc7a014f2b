package dev.baton.etcd;

import dev.baton.election.MonotonicClock;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * One etcd lease that every election of a store with the same TTL is attached to, so that one
 * keep-alive renews them all.
 *
 * <p>Keep-alives are shared under one rule that keeps the lease contract exact: a caller that
 * started at {@code t0} may rely on a keep-alive only if it was sent at or after {@code t0 -
 * reuse}. The etcd lease is granted {@code reuse} longer than the TTL reported to callers, so such a
 * keep-alive still keeps every key on this lease alive until {@code t0 + reported TTL}.
 */
final class SharedLease {

  /** One election granted on this lease: its key's token (mod_revision) identifies the term. */
  record Grant(String election, long token) {}

  final long id;
  /** The TTL this store asked etcd for, in seconds: the key under which the store shares it. */
  final long requestedSeconds;
  /** The TTL etcd applies, in seconds (it may raise what was asked to its own minimum). */
  final long grantedSeconds;

  private final Lease leaseClient;
  private final MonotonicClock clock;
  private final long callTimeoutNanos;

  // Bookkeeping, guarded by the owning SharedLeases registry's monitor.
  final Set<Grant> grants = new HashSet<>();
  int reservations;

  // Keep-alive state, guarded by this object's monitor.
  private boolean lost;
  private long confirmedSentAt;
  private CompletableFuture<Void> inFlight;
  private long inFlightSentAt;

  SharedLease(long id, long requestedSeconds, long grantedSeconds, long grantSentAt, Lease leaseClient, MonotonicClock clock, long callTimeoutNanos) {
    this.id = id;
    this.requestedSeconds = requestedSeconds;
    this.grantedSeconds = grantedSeconds;
    this.leaseClient = leaseClient;
    this.clock = clock;
    this.callTimeoutNanos = callTimeoutNanos;
    // The grant itself counts as the first keep-alive: etcd started the TTL when it served it.
    this.confirmedSentAt = grantSentAt;
  }

  /**
   * Completes when etcd has confirmed a keep-alive sent no earlier than {@code startedAt -
   * reuseNanos}: at once when one already was, by joining one in flight that qualifies, or by
   * sending a new one. Fails with {@link LeaseGoneException} when etcd no longer knows the lease.
   */
  synchronized CompletableFuture<Void> keepAlive(long startedAt, long reuseNanos) {
    if (lost) {
      return CompletableFuture.failedFuture(new LeaseGoneException(id));
    }
    long oldestUsable = startedAt - reuseNanos;
    if (confirmedSentAt - oldestUsable >= 0) {
      return CompletableFuture.completedFuture(null);
    }
    if (inFlight != null && inFlightSentAt - oldestUsable >= 0) {
      return inFlight;
    }
    long sentAt = clock.nanoTime();
    CompletableFuture<LeaseKeepAliveResponse> sent =
        sendKeepAlive()
            // A keep-alive is idempotent: one more try at once gets past a member that just died.
            .exceptionallyCompose(e -> EtcdErrors.isLeaseNotFound(e) ? CompletableFuture.failedFuture(e) : sendKeepAlive())
            // Bounded here as well as by the caller's wait, so a hung stream cannot stay "in flight".
            .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS);
    CompletableFuture<Void> confirmed =
        sent.handle(
            (response, error) -> {
              settled(sentAt, error);
              if (error == null) {
                return null;
              }
              if (EtcdErrors.isLeaseNotFound(error)) {
                throw new LeaseGoneException(id);
              }
              throw error instanceof CompletionException ? (CompletionException) error : new CompletionException(error);
            });
    if (!confirmed.isDone()) {
      inFlight = confirmed;
      inFlightSentAt = sentAt;
    }
    return confirmed;
  }

  private CompletableFuture<LeaseKeepAliveResponse> sendKeepAlive() {
    return EtcdErrors.safely(() -> leaseClient.keepAliveOnce(id));
  }

  private synchronized void settled(long sentAt, Throwable error) {
    if (error == null) {
      if (sentAt - confirmedSentAt > 0) {
        confirmedSentAt = sentAt;
      }
    } else if (EtcdErrors.isLeaseNotFound(error)) {
      lost = true;
    }
    if (inFlightSentAt == sentAt) {
      inFlight = null;
    }
  }

  /** etcd said this lease does not exist (expired or revoked); every key on it is gone. */
  synchronized void markLost() {
    lost = true;
  }

  synchronized boolean isLost() {
    return lost;
  }

  @Override
  public String toString() {
    return "etcd lease " + Long.toHexString(id) + " (" + grantedSeconds + "s)";
  }
}
