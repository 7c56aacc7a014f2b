package dev.baton.zookeeper;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.election.Renewal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;

/**
 * One {@link ZooKeeperLeaseStore#renewAll} call: one {@code sync} for the whole batch confirms
 * every lease whose node an earlier renewal read and watched, and that has not changed since (see
 * {@link VerifiedLeaseNodes}); the other leases are confirmed by a read of their node sent right
 * behind the sync, which also sets the watch. A lease is renewed when its node is still the one
 * granted to it (same {@code mzxid}, owned by the lease's session, holding its candidate id). In a
 * leader's steady state a renewal is one {@code sync}, a request about the size of a ping, and the
 * client sends no ping of its own while renewals come at least every third of the session timeout.
 * Each lease is told what {@link ZooKeeperLeaseStore#renew} alone would have told it, and goes
 * through {@link UnrenewedLeases} exactly as a single renewal does.
 */
final class RenewalBatch {

  private final ZooKeeperLeaseStore store;
  private final UnrenewedLeases unrenewed;
  private final VerifiedLeaseNodes verified;
  private final List<Lease> leases;
  private final long startedNanos;
  private final CallDeadline deadline;
  private final Renewal[] outcomes;

  /**
   * One lease of the batch, at {@code index} in it; {@code term} is what {@link UnrenewedLeases}
   * knows of its term, null when nothing.
   */
  private record Renewing(
      int index, Lease lease, LeaseHandle handle, ElectionNodes nodes, UnrenewedLeases.State term) {

    /** The lease's node as the ZooKeeper handle sees it; the term's, made once, when known. */
    String rawPath() {
      return term != null ? term.rawPath : nodes.rawChild(handle.node());
    }

    /** The lease's node as messages name it. */
    String path() {
      return nodes.child(handle.node());
    }
  }

  RenewalBatch(
      ZooKeeperLeaseStore store,
      UnrenewedLeases unrenewed,
      VerifiedLeaseNodes verified,
      MonotonicClock clock,
      Duration callTimeout,
      List<Lease> leases) {
    this.store = store;
    this.unrenewed = unrenewed;
    this.verified = verified;
    this.leases = leases;
    this.deadline = CallDeadline.start(clock, callTimeout);
    this.startedNanos = deadline.atNanos() - callTimeout.toNanos();
    this.outcomes = new Renewal[leases.size()];
  }

  /** The outcome of each lease, in the order given. */
  List<Renewal> renew() {
    List<LeaseHandle> handles = new ArrayList<>(leases.size());
    for (int i = 0; i < leases.size(); i++) {
      try {
        handles.add(store.handle(leases.get(i)));
      } catch (RuntimeException e) {
        handles.add(null);
        outcomes[i] = Renewal.failed(e); // not a lease of this store
      }
    }
    // A failure of the whole call concerns the one election when there is one, else the batch.
    String concerns = leases.size() == 1 ? leases.get(0).election() : null;
    ZooKeeper zk;
    try {
      zk = store.session(concerns, deadline);
    } catch (LeaseStoreException e) {
      for (int i = 0; i < leases.size(); i++) {
        if (outcomes[i] == null) {
          outcomes[i] = Renewal.failed(failedWithBatch(leases.get(i), e));
        }
      }
      return List.of(outcomes);
    }
    List<Renewing> reading = new ArrayList<>(leases.size());
    for (int i = 0; i < leases.size(); i++) {
      Lease lease = leases.get(i);
      LeaseHandle handle = handles.get(i);
      if (handle == null) {
        continue;
      }
      if (zk.getSessionId() != handle.sessionId()) {
        outcomes[i] = Renewal.failed(ZooKeeperLeaseStore.sessionEnded(lease, handle, zk));
        continue;
      }
      UnrenewedLeases.State term = unrenewed.renewalStarts(lease.election(), handle);
      if (term == UnrenewedLeases.GIVEN_UP) {
        outcomes[i] =
            Renewal.failed(
                ZooKeeperLeaseStore.lost(
                    lease, "it went unrenewed for its TTL, so the store gave it back", null));
        continue;
      }
      try {
        ElectionNodes nodes = term != null ? term.nodes() : store.nodes(lease.election());
        reading.add(new Renewing(i, lease, handle, nodes, term));
      } catch (RuntimeException e) {
        outcomes[i] = Renewal.failed(e); // not an election name this store takes
      }
    }
    if (reading.isEmpty()) {
      return List.of(outcomes);
    }
    try {
      read(zk, reading, concerns);
    } finally {
      for (Renewing r : reading) {
        ended(r, outcomes[r.index()]);
      }
    }
    return List.of(outcomes);
  }

  /** Tells {@link UnrenewedLeases} how the renewal of {@code r} ended. */
  private void ended(Renewing r, Renewal outcome) {
    boolean renewed = outcome != null && outcome.isRenewed();
    boolean lost =
        outcome != null
            && !renewed
            && outcome.failure().orElseThrow() instanceof LeaseLostException;
    if (r.term() != null) {
      long until = renewed ? startedNanos + outcome.lease().orElseThrow().ttl().toNanos() : 0;
      unrenewed.renewalEnded(r.term(), renewed, until, lost);
    } else if (renewed) {
      unrenewed.confirmed(
          r.nodes(),
          r.handle(),
          r.lease().candidate(),
          startedNanos,
          outcome.lease().orElseThrow().ttl());
    }
  }

  private void read(ZooKeeper zk, List<Renewing> reading, String concerns) {
    String what = reading.size() == 1 ? "renew" : "renew of " + reading.size() + " leases";
    // Leases whose node was read and has not changed since need only the sync; the others are read
    // again, right behind it, and watched from then on.
    List<Renewing> unchanged = new ArrayList<>(reading.size());
    List<Renewing> toRead = new ArrayList<>();
    long changesBefore = verified.changes();
    for (Renewing r : reading) {
      if (verified.unchangedSinceRead(r.rawPath(), r.lease().token().value())) {
        unchanged.add(r);
      } else {
        toRead.add(r);
      }
    }
    Reply<Void> synced = FreshReads.sync(zk);
    List<Reply<OpResult>> reads = sendReads(zk, toRead);
    try {
      synced.await(deadline, concerns, what);
    } catch (KeeperException e) {
      for (Renewing r : reading) {
        outcomes[r.index()] = Renewal.failed(readFailure(r, e));
      }
      return;
    } catch (LeaseStoreException e) {
      failAll(reading, e);
      return;
    }
    Duration ttl = Duration.ofMillis(zk.getSessionTimeout());
    // Checked after the sync's answer: a change the server made before the sync has been seen,
    // and when nothing changed at all since the first look, every look still holds.
    boolean noneChanged = verified.changes() == changesBefore;
    for (Renewing r : unchanged) {
      if (noneChanged || verified.unchangedSinceRead(r.rawPath(), r.lease().token().value())) {
        outcomes[r.index()] = Renewal.renewed(r.lease().renewed(ttl, r.lease().handle()));
      } else {
        toRead.add(r);
        reads.add(FreshReads.watchedNode(zk, r.rawPath(), r.path(), verified));
      }
    }
    for (int k = 0; k < toRead.size(); k++) {
      Renewing r = toRead.get(k);
      try {
        outcomes[r.index()] = outcome(zk, r, reads.get(k).await(deadline, concerns, what), ttl);
      } catch (KeeperException e) {
        outcomes[r.index()] = Renewal.failed(readFailure(r, e));
      } catch (LeaseStoreException e) {
        failAll(toRead.subList(k, toRead.size()), e);
        return;
      }
    }
  }

  private List<Reply<OpResult>> sendReads(ZooKeeper zk, List<Renewing> toRead) {
    List<Reply<OpResult>> reads = new ArrayList<>(toRead.size());
    for (Renewing r : toRead) {
      reads.add(FreshReads.watchedNode(zk, r.rawPath(), r.path(), verified));
    }
    return reads;
  }

  /** What the read of a lease node says of its lease: still ours in its own session, or lost. */
  private Renewal outcome(ZooKeeper zk, Renewing r, OpResult result, Duration ttl) {
    Lease lease = r.lease();
    NodeRead node;
    try {
      node = NodeRead.of(result, r.path());
    } catch (KeeperException e) {
      return Renewal.failed(readFailure(r, e));
    }
    if (node == null) {
      return Renewal.failed(
          ZooKeeperLeaseStore.lost(
              lease,
              "its node is gone (released, given back, or its session expired)",
              store.holderAfterLoss(zk, r.nodes(), deadline)));
    }
    String holder = new String(node.data(), UTF_8);
    if (node.stat().getMzxid() != lease.token().value()
        || node.stat().getEphemeralOwner() != r.handle().sessionId()
        || !holder.equals(lease.candidate())) {
      return Renewal.failed(
          ZooKeeperLeaseStore.lost(
              lease,
              "the election was granted again (token "
                  + node.stat().getMzxid()
                  + ", held by '"
                  + holder
                  + "')",
              holder));
    }
    return Renewal.renewed(lease.renewed(ttl, lease.handle()));
  }

  private static RuntimeException readFailure(Renewing r, KeeperException e) {
    if (e.code() == Code.SESSIONEXPIRED) {
      return ZooKeeperLeaseStore.lost(
          r.lease(),
          "its ZooKeeper session " + LeaseHandle.sessionText(r.handle().sessionId()) + " expired",
          null);
    }
    return ZooKeeperLeaseStore.failure(
        r.lease().election(), "renew of '" + r.lease().candidate() + "'", e);
  }

  /** The store could not answer for the batch: each lease is told, under its own election. */
  private void failAll(List<Renewing> leases, LeaseStoreException e) {
    for (Renewing r : leases) {
      outcomes[r.index()] = Renewal.failed(failedWithBatch(r.lease(), e));
    }
  }

  private static LeaseStoreException failedWithBatch(Lease lease, LeaseStoreException e) {
    if (e.election().isPresent()) {
      return e;
    }
    return new LeaseStoreException(
        lease.election(),
        "renew of '" + lease.candidate() + "' failed with its batch: " + e.getMessage(),
        e);
  }
}
