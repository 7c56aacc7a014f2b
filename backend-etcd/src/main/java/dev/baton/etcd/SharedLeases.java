package dev.baton.etcd;

import dev.baton.election.MonotonicClock;
import io.etcd.jetcd.Lease;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd leases of one store: at most one live lease per TTL, granted when first needed and
 * revoked when the last election on it is released.
 *
 * <p>An acquisition reserves the lease before it attaches a key to it and unreserves it after, so a
 * release of another election cannot revoke the lease under it. A lease etcd no longer knows is
 * replaced by a fresh grant on the next acquisition.
 */
final class SharedLeases {

  private static final Logger log = LoggerFactory.getLogger(SharedLeases.class);

  private final Lease leaseClient;
  private final MonotonicClock clock;
  private final long callTimeoutNanos;

  private final Map<Long, SharedLease> byTtl = new HashMap<>();
  private final Map<Long, SharedLease> byId = new HashMap<>();
  private final Map<Long, CompletableFuture<SharedLease>> granting = new HashMap<>();
  private boolean closed;

  SharedLeases(Lease leaseClient, MonotonicClock clock, long callTimeoutNanos) {
    this.leaseClient = leaseClient;
    this.clock = clock;
    this.callTimeoutNanos = callTimeoutNanos;
  }

  /**
   * The live lease for {@code ttlSeconds}, reserved for the caller (who must {@link #unreserve}
   * it), or the grant in progress that will provide one; never both.
   */
  synchronized Reservation reserve(long ttlSeconds) {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    SharedLease live = byTtl.get(ttlSeconds);
    if (live != null && live.isLost()) {
      retire(live);
      live = null;
    }
    if (live != null) {
      live.reservations++;
      return new Reservation(live, null);
    }
    CompletableFuture<SharedLease> pending = granting.get(ttlSeconds);
    if (pending == null) {
      long sentAt = clock.nanoTime();
      CompletableFuture<SharedLease> grant =
          EtcdErrors.safely(() -> leaseClient.grant(ttlSeconds, callTimeoutNanos, TimeUnit.NANOSECONDS))
              .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS)
              .thenApply(r -> new SharedLease(r.getID(), ttlSeconds, r.getTTL(), sentAt, leaseClient, clock, callTimeoutNanos));
      granting.put(ttlSeconds, grant);
      grant.whenComplete((lease, error) -> installed(ttlSeconds, grant, lease));
      pending = grant;
    }
    return new Reservation(null, pending);
  }

  /** Either a reserved lease or a grant to wait for before asking again. */
  record Reservation(SharedLease lease, CompletableFuture<SharedLease> grant) {}

  private synchronized void installed(long ttlSeconds, CompletableFuture<SharedLease> grant, SharedLease lease) {
    if (granting.get(ttlSeconds) == grant) {
      granting.remove(ttlSeconds);
    }
    if (lease == null) {
      return;
    }
    if (closed || byTtl.containsKey(ttlSeconds)) {
      // Not needed any more; it expires on its own if this revoke does not reach etcd.
      revoke(lease);
      return;
    }
    byTtl.put(ttlSeconds, lease);
    byId.put(lease.id, lease);
  }

  /**
   * Ends a reservation. A lease that no election uses afterwards (the acquisition found the
   * election held) is revoked rather than left for someone to keep alive.
   */
  synchronized void unreserve(SharedLease lease) {
    lease.reservations--;
    retireIfUnused(lease);
  }

  /** Whether a live lease for {@code ttlSeconds} exists, so acquiring costs no grant. */
  synchronized boolean hasLive(long ttlSeconds) {
    SharedLease live = byTtl.get(ttlSeconds);
    return live != null && !live.isLost();
  }

  synchronized void granted(SharedLease lease, String election, long token) {
    lease.grants.add(new SharedLease.Grant(election, token));
  }

  /**
   * Forgets a grant (released, lost or replaced by a new term). When it was the last use of its
   * lease, the lease is retired and revoked, which also deletes any key still attached to it.
   */
  synchronized void forget(long leaseId, String election, long token) {
    SharedLease lease = byId.get(leaseId);
    if (lease == null) {
      return;
    }
    lease.grants.remove(new SharedLease.Grant(election, token));
    retireIfUnused(lease);
  }

  private void retireIfUnused(SharedLease lease) {
    if (lease.grants.isEmpty() && lease.reservations == 0 && byId.get(lease.id) == lease) {
      retire(lease);
      revoke(lease);
    }
  }

  /** etcd no longer knows this lease; the next acquisition grants a new one. */
  synchronized void lost(SharedLease lease) {
    lease.markLost();
    retire(lease);
  }

  /** The live lease with this id, when this store granted it. */
  synchronized Optional<SharedLease> byId(long leaseId) {
    return Optional.ofNullable(byId.get(leaseId));
  }

  /** Retires every lease and returns the revocations, for the store's close. */
  synchronized List<CompletableFuture<?>> revokeAll() {
    closed = true;
    List<CompletableFuture<?>> revocations = new ArrayList<>();
    for (SharedLease lease : new ArrayList<>(byId.values())) {
      retire(lease);
      revocations.add(revoke(lease));
    }
    return revocations;
  }

  private void retire(SharedLease lease) {
    byTtl.remove(lease.requestedSeconds, lease);
    byId.remove(lease.id, lease);
  }

  private CompletableFuture<?> revoke(SharedLease lease) {
    // Best effort: an unrevoked lease that nobody keeps alive expires after its TTL anyway.
    return EtcdErrors.safely(() -> leaseClient.revoke(lease.id))
        .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS)
        .whenComplete(
            (ok, error) -> {
              if (error != null && !EtcdErrors.isLeaseNotFound(error)) {
                log.debug("Revoking {} failed; it expires on its own: {}", lease, EtcdErrors.unwrap(error).toString());
              }
            });
  }

  synchronized int size() {
    return byId.size();
  }
}
