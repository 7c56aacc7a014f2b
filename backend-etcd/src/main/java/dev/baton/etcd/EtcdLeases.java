package dev.baton.etcd;

import dev.baton.election.MonotonicClock;
import io.etcd.jetcd.Lease;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd leases of one store, in one of two modes.
 *
 * <p><b>One lease per election</b> (the default): every acquisition attaches its key to a lease of
 * its own, so a key lives exactly its TTL after its own last renewal. A lease granted for an
 * acquisition that then found the election held is kept, unrenewed, as the spare for the next
 * acquisition with that TTL while it is young, so that acquiring does not wait for a grant. A
 * released lease is handed on: the release leaves the key on it marked released (see {@link
 * ReleaseMarker}), the next holder takes both over, and this store never touches that lease again:
 * it neither renews nor revokes a lease once one of its keys was released or lost on it, because
 * somebody else's key may be on it by then. Such a lease ends by itself, at most its TTL later.
 *
 * <p><b>Shared leases</b>: at most one live lease per TTL, granted when first needed and revoked
 * when the last election on it is released. An acquisition reserves the lease before it attaches a
 * key to it and unreserves it after, so a release of another election cannot revoke the lease under
 * it. A shared lease is never handed on.
 *
 * <p>In both modes a lease etcd no longer knows is dropped and the next acquisition grants afresh.
 */
final class EtcdLeases {

  private static final Logger log = LoggerFactory.getLogger(EtcdLeases.class);
  private static final int MAX_REMEMBERED = 1024;

  private final Lease leaseClient;
  private final MonotonicClock clock;
  private final long callTimeoutNanos;
  private final boolean shared;

  private final Map<Long, EtcdLease> byId = new HashMap<>();

  /**
   * Leases dropped while a write of ours on them had an unknown outcome (an acquisition or a
   * release that timed out): a key with our candidate id on one of them is still ours, for a new
   * term. Bounded; such a lease ends within its TTL, as nobody renews it.
   */
  private final Map<Long, Boolean> uncertain = bounded();

  /**
   * Leases a release of ours marked or deleted a key on. A read sent before such a release applied
   * can be answered after it ended, and show our key on a lease this store has dropped: that key is
   * gone, not somebody else's. Bounded, as {@link #uncertain}; only leases handed on with a release
   * (a lease per election): a shared lease stays this store's.
   */
  private final Map<Long, Boolean> releasedFrom = bounded();

  private static Map<Long, Boolean> bounded() {
    return new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
        return size() > MAX_REMEMBERED;
      }
    };
  }

  /**
   * Shared mode: the live lease per requested TTL. Per-election mode: the spare per requested TTL.
   */
  private final Map<Long, EtcdLease> byTtl = new HashMap<>();

  /**
   * The grant in progress per requested TTL that every acquisition waits for: of the shared lease,
   * or in per-election mode of the spare (see {@link #prepareSpare}).
   */
  private final Map<Long, CompletableFuture<EtcdLease>> granting = new HashMap<>();

  private boolean closed;

  EtcdLeases(Lease leaseClient, MonotonicClock clock, long callTimeoutNanos, boolean shared) {
    this.leaseClient = leaseClient;
    this.clock = clock;
    this.callTimeoutNanos = callTimeoutNanos;
    this.shared = shared;
  }

  boolean shared() {
    return shared;
  }

  /**
   * A lease to attach a new key to, reserved for the caller (who must {@link #unreserve} it), or a
   * grant in progress. Shared mode: the live lease for {@code ttlSeconds}, else the grant to wait
   * for before asking again. Per-election mode: the young spare, else the spare's grant under way
   * to wait for, else a grant made for the caller alone.
   */
  synchronized Reservation reserve(long ttlSeconds, boolean mayWaitForSpare) {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    EtcdLease ready = byTtl.get(ttlSeconds);
    if (ready != null && (ready.isLost() || (!shared && !young(ready)))) {
      // An old spare was never attached to a key and nobody renews it: dropping it is enough.
      retire(ready);
      ready = null;
    }
    if (ready != null) {
      if (!shared) {
        byTtl.remove(ttlSeconds);
      }
      ready.reservations++;
      return new Reservation(ready, null, false);
    }
    CompletableFuture<EtcdLease> pending = granting.get(ttlSeconds);
    if (!shared && (pending == null || !mayWaitForSpare)) {
      CompletableFuture<EtcdLease> grant = grant(ttlSeconds);
      return new Reservation(null, grant.thenApply(this::installReserved), true);
    }
    if (pending == null) {
      pending = grantAwaited(ttlSeconds);
    }
    return new Reservation(null, pending, false);
  }

  /**
   * Starts a grant that acquisitions wait for (the shared lease, or the spare). Its future
   * completes only once the lease is installed, so that whoever waited for it finds it when asking
   * again.
   */
  private CompletableFuture<EtcdLease> grantAwaited(long ttlSeconds) {
    CompletableFuture<EtcdLease> installed = new CompletableFuture<>();
    granting.put(ttlSeconds, installed);
    grant(ttlSeconds)
        .whenComplete(
            (lease, error) -> {
              installAwaited(ttlSeconds, installed, lease);
              if (error != null) {
                installed.completeExceptionally(error);
              } else {
                installed.complete(lease);
              }
            });
    return installed;
  }

  /**
   * Either a reserved lease, or a grant: already reserved for the caller when {@code
   * grantReserved}, else one to wait for before asking again.
   */
  record Reservation(EtcdLease lease, CompletableFuture<EtcdLease> grant, boolean grantReserved) {}

  private CompletableFuture<EtcdLease> grant(long ttlSeconds) {
    long sentAt = clock.nanoTime();
    return EtcdErrors.safely(
            () -> leaseClient.grant(ttlSeconds, callTimeoutNanos, TimeUnit.NANOSECONDS))
        .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS)
        .thenApply(
            r ->
                new EtcdLease(
                    r.getID(),
                    ttlSeconds,
                    r.getTTL(),
                    sentAt,
                    leaseClient,
                    clock,
                    callTimeoutNanos));
  }

  private synchronized EtcdLease installReserved(EtcdLease lease) {
    if (closed) {
      revoke(lease);
      throw new IllegalStateException("closed");
    }
    byId.put(lease.id, lease);
    lease.reservations++;
    return lease;
  }

  /**
   * Per-election mode: starts granting the spare for {@code ttlSeconds} unless there is a young one
   * or its grant is under way, so that an acquisition that first has to read the key (it knows
   * nothing of it) finds a lease ready if the key is free. If it is held, the spare waits,
   * unrenewed, for the next acquisition.
   */
  synchronized void prepareSpare(long ttlSeconds) {
    EtcdLease spare = byTtl.get(ttlSeconds);
    if (shared
        || closed
        || granting.containsKey(ttlSeconds)
        || (spare != null && !spare.isLost() && young(spare))) {
      return;
    }
    grantAwaited(ttlSeconds);
  }

  /** A grant that acquisitions wait for: the shared lease, or the spare. */
  private synchronized void installAwaited(
      long ttlSeconds, CompletableFuture<EtcdLease> grant, EtcdLease lease) {
    if (granting.get(ttlSeconds) == grant) {
      granting.remove(ttlSeconds);
    }
    if (lease == null) {
      return;
    }
    EtcdLease present = byTtl.get(ttlSeconds);
    if (closed || (present != null && !present.isLost() && (shared || young(present)))) {
      // Not needed any more; it expires on its own if this revoke does not reach etcd.
      revoke(lease);
      return;
    }
    byTtl.put(ttlSeconds, lease);
    byId.put(lease.id, lease);
  }

  /** A spare is used only while it has most of its TTL left: it is renewed as it is put to use. */
  private boolean young(EtcdLease lease) {
    return clock.nanoTime() - lease.confirmedSentAt()
        < TimeUnit.SECONDS.toNanos(lease.grantedSeconds) / 2;
  }

  /**
   * Takes over a lease that a release handed on (see {@link ReleaseMarker}), reserved for the
   * caller; its keep-alive was sent at {@code keptAliveAt} and confirmed.
   */
  synchronized EtcdLease adopt(
      long id, long requestedSeconds, long grantedSeconds, long keptAliveAt) {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    EtcdLease lease = byId.get(id);
    if (lease == null || lease.isLost()) {
      lease =
          new EtcdLease(
              id,
              requestedSeconds,
              grantedSeconds,
              keptAliveAt,
              leaseClient,
              clock,
              callTimeoutNanos);
      byId.put(id, lease);
    }
    lease.reservations++;
    return lease;
  }

  /**
   * Reserves the lease of an election this store holds, for a new term on it; empty when the store
   * does not hold it, or it has another TTL than the new term asks for.
   */
  synchronized Optional<EtcdLease> reserveHeld(long leaseId, long ttlSeconds) {
    EtcdLease lease = byId.get(leaseId);
    if (lease == null || lease.isLost() || lease.requestedSeconds != ttlSeconds) {
      return Optional.empty();
    }
    lease.reservations++;
    return Optional.of(lease);
  }

  /**
   * Ends a reservation. A lease that no election uses afterwards (the acquisition found the
   * election held) becomes the spare in per-election mode, or is revoked.
   */
  synchronized void unreserve(EtcdLease lease) {
    lease.reservations--;
    if (!unused(lease)) {
      return;
    }
    if (!shared
        && !lease.carriedKey
        && !closed
        && !lease.isLost()
        && !byTtl.containsKey(lease.requestedSeconds)
        && young(lease)) {
      byTtl.put(lease.requestedSeconds, lease);
      return;
    }
    dispose(lease);
  }

  /** Whether acquiring with this TTL costs no grant: a live shared lease, or a young spare. */
  synchronized boolean hasReady(long ttlSeconds) {
    EtcdLease ready = byTtl.get(ttlSeconds);
    return ready != null && !ready.isLost() && (shared || young(ready));
  }

  /**
   * A write on this lease (an acquisition's or a release's) ended without knowing whether it was
   * applied: the lease may carry a key of ours, so it must not serve another election as the spare,
   * and a key of ours on it stays recognisable after the lease is dropped.
   */
  synchronized void outcomeUnknown(long leaseId) {
    EtcdLease lease = byId.get(leaseId);
    if (lease != null) {
      lease.carriedKey = true;
      lease.uncertain = true;
    } else {
      uncertain.put(leaseId, Boolean.TRUE);
    }
  }

  /**
   * Whether this store granted {@code election}'s term {@code token} on this lease, and keeps it.
   */
  synchronized boolean holds(long leaseId, String election, long token) {
    EtcdLease lease = byId.get(leaseId);
    return lease != null && lease.grants.contains(new EtcdLease.Grant(election, token));
  }

  /**
   * Whether a key of ours on this etcd lease is this store's: a lease it holds, or one dropped
   * uncertain.
   */
  /** Whether some write of this store went out on a lease and got no answer. */
  synchronized boolean anyUncertain() {
    return !uncertain.isEmpty() || byId.values().stream().anyMatch(l -> l.uncertain);
  }

  synchronized boolean isOwn(long leaseId) {
    return byId.containsKey(leaseId) || uncertain.containsKey(leaseId);
  }

  /** A release of ours on this lease was applied. */
  synchronized void released(long leaseId) {
    releasedFrom.put(leaseId, Boolean.TRUE);
  }

  /** Whether a release of ours on this lease was applied: see {@link #releasedFrom}. */
  synchronized boolean releasedFrom(long leaseId) {
    return releasedFrom.containsKey(leaseId);
  }

  synchronized void granted(EtcdLease lease, String election, long token) {
    lease.grants.add(new EtcdLease.Grant(election, token));
    lease.carriedKey = true;
  }

  /**
   * Forgets a grant (released, lost or replaced by a new term). A lease that no election uses
   * afterwards is dropped: revoked in shared mode (which also deletes any key still on it), left to
   * end by itself in per-election mode, where it may carry its next holder's key by now.
   */
  synchronized void forget(long leaseId, String election, long token) {
    EtcdLease lease = byId.get(leaseId);
    if (lease == null) {
      return;
    }
    lease.grants.remove(new EtcdLease.Grant(election, token));
    if (unused(lease)) {
      dispose(lease);
    }
  }

  private boolean unused(EtcdLease lease) {
    return lease.grants.isEmpty() && lease.reservations == 0 && byId.get(lease.id) == lease;
  }

  private void dispose(EtcdLease lease) {
    retire(lease);
    if (lease.uncertain) {
      uncertain.put(lease.id, Boolean.TRUE);
    }
    if (shared || !lease.carriedKey) {
      revoke(lease);
    }
  }

  /**
   * A release is about to mark the key on this lease released. Set before it is sent: its answer
   * may come after the next holder took the lease over, and a close in between must not revoke the
   * lease (and the next holder's key with it).
   */
  synchronized void handingOn(long leaseId) {
    EtcdLease lease = byId.get(leaseId);
    if (lease != null) {
      lease.handingOn = true;
    }
  }

  /** etcd no longer knows this lease; the next acquisition grants a new one. */
  synchronized void lost(EtcdLease lease) {
    lease.markLost();
    retire(lease);
  }

  /** The live lease with this id, when this store holds it. */
  synchronized Optional<EtcdLease> byId(long leaseId) {
    return Optional.ofNullable(byId.get(leaseId));
  }

  /**
   * Retires every lease and returns their revocations, for the store's close: the leases of the
   * elections still held (whose keys the revocation deletes, letting the next candidate in) and the
   * spares. Leases handed on were dropped when released; those whose release is still out are left
   * to their next holder, or to expire.
   */
  synchronized List<CompletableFuture<?>> revokeAll() {
    closed = true;
    List<CompletableFuture<?>> revocations = new ArrayList<>();
    for (EtcdLease lease : new ArrayList<>(byId.values())) {
      retire(lease);
      if (!lease.handingOn) {
        revocations.add(revoke(lease));
      }
    }
    return revocations;
  }

  private void retire(EtcdLease lease) {
    byTtl.remove(lease.requestedSeconds, lease);
    byId.remove(lease.id, lease);
  }

  private CompletableFuture<?> revoke(EtcdLease lease) {
    // Best effort: an unrevoked lease that nobody keeps alive expires after its TTL anyway.
    return EtcdErrors.safely(() -> leaseClient.revoke(lease.id))
        .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS)
        .whenComplete(
            (ok, error) -> {
              if (error != null && !EtcdErrors.isLeaseNotFound(error)) {
                log.debug(
                    "Revoking {} failed; it expires on its own: {}",
                    lease,
                    EtcdErrors.unwrap(error).toString());
              }
            });
  }

  synchronized int size() {
    return byId.size();
  }
}
