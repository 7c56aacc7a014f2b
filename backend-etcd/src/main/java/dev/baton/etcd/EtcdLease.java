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
 * One etcd lease that this store keeps alive: by default the lease of one election, with shared
 * leases the one lease of every election of the store with the same TTL.
 *
 * <p>Keep-alives are reused under one rule that keeps the lease contract exact: a caller that
 * started at {@code t0} may rely on a keep-alive only if it was sent at or after {@code t0 -
 * reuse}. With {@code reuse} zero (the default), a renewal relies only on a keep-alive sent after
 * it began, so the key lives exactly the etcd TTL from then; with shared leases the etcd lease is
 * granted {@code reuse} longer than the TTL reported to callers, so an older keep-alive still keeps
 * every key on it alive until {@code t0 + reported TTL}.
 */
final class EtcdLease {

  /**
   * One election granted on this lease: its key's token (mod_revision) identifies the term.
   *
   * <p>Its equals and hashCode are written out: a record's own go through method handles, which a
   * handover runs uncompiled, at tens of microseconds a lookup on a two-core machine.
   */
  record Grant(String election, long token) {

    @Override
    public boolean equals(Object o) {
      return o instanceof Grant g && token == g.token && election.equals(g.election);
    }

    @Override
    public int hashCode() {
      return election.hashCode() * 31 + Long.hashCode(token);
    }
  }

  final long id;

  /** The TTL this store asked etcd for, in seconds: the key under which the store shares it. */
  final long requestedSeconds;

  /** The TTL etcd applies, in seconds (it may raise what was asked to its own minimum). */
  final long grantedSeconds;

  private final Lease leaseClient;
  private final MonotonicClock clock;
  private final long callTimeoutNanos;

  // Bookkeeping, guarded by the owning EtcdLeases registry's monitor.
  final Set<Grant> grants = new HashSet<>();
  int reservations;

  /**
   * Whether a key of ours was ever attached to it: such a lease may have been handed on, see
   * EtcdLeases.
   */
  boolean carriedKey;

  /**
   * Whether a write of ours on it has an unknown outcome (timed out): it may carry a key of ours
   * that nobody tracks.
   */
  boolean uncertain;

  /**
   * Whether a release of ours may have marked its key released: from then on the next holder may
   * take the lease over, so this store must never revoke it, not even on close.
   */
  boolean handingOn;

  // Keep-alive state, guarded by this object's monitor.
  private boolean lost;
  private long confirmedSentAt;
  private CompletableFuture<Void> inFlight;
  private long inFlightSentAt;

  /**
   * @param confirmedSentAt when the grant or the last keep-alive etcd confirmed was sent: etcd
   *     started the TTL when it served it
   */
  EtcdLease(
      long id,
      long requestedSeconds,
      long grantedSeconds,
      long confirmedSentAt,
      Lease leaseClient,
      MonotonicClock clock,
      long callTimeoutNanos) {
    this.id = id;
    this.requestedSeconds = requestedSeconds;
    this.grantedSeconds = grantedSeconds;
    this.leaseClient = leaseClient;
    this.clock = clock;
    this.callTimeoutNanos = callTimeoutNanos;
    this.confirmedSentAt = confirmedSentAt;
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
        sendKeepAlive(leaseClient, id, callTimeoutNanos);
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
              throw error instanceof CompletionException
                  ? (CompletionException) error
                  : new CompletionException(error);
            });
    if (!confirmed.isDone()) {
      inFlight = confirmed;
      inFlightSentAt = sentAt;
    }
    return confirmed;
  }

  /**
   * One keep-alive of lease {@code id}, bounded by the call timeout so that a hung stream cannot
   * stay in flight; one more try at once when it failed for another reason than the lease being
   * gone (a keep-alive is idempotent, so this gets past a member that just died).
   */
  static CompletableFuture<LeaseKeepAliveResponse> sendKeepAlive(
      Lease leaseClient, long id, long callTimeoutNanos) {
    return EtcdErrors.safely(() -> leaseClient.keepAliveOnce(id))
        .exceptionallyCompose(
            e ->
                EtcdErrors.isLeaseNotFound(e)
                    ? CompletableFuture.failedFuture(e)
                    : EtcdErrors.safely(() -> leaseClient.keepAliveOnce(id)))
        .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS);
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

  /** When the last keep-alive (or the grant) that etcd confirmed was sent. */
  synchronized long confirmedSentAt() {
    return confirmedSentAt;
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
