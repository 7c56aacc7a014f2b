package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import dev.baton.election.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A node's store whose renewals can be held at the door and then let through, as a network that
 * delays a request (and then delivers it) would: a renewal that reaches the store only after its
 * elector's renew deadline, and succeeds there. It also fixes how many leases the elector may renew
 * per call, so one scenario runs the elector's direct renewals ({@code batchLimit} 1, {@link
 * #renew}) and another its batched ones ({@link #renewAll}), on any backend.
 *
 * <p>Everything else goes straight to the node's (recorded) store, which it never closes; {@link
 * #close()} lets held renewals through.
 */
final class HeldRenewals extends ForwardingLeaseStore {

  private final int batchLimit;
  private final Duration holdAtMost;
  private final Object lock = new Object();
  private boolean holding;
  private int held;
  private Lease lastHeld;
  private volatile boolean passLeaseWatch;

  /**
   * @param holdAtMost how long a renewal waits at most, so a scenario that fails cannot hang an
   *     elector for ever
   */
  HeldRenewals(LeaseStore delegate, int batchLimit, Duration holdAtMost) {
    super(delegate);
    if (batchLimit < 1) {
      throw new IllegalArgumentException("batchLimit must be at least 1, but was " + batchLimit);
    }
    this.batchLimit = batchLimit;
    this.holdAtMost = requireNonNull(holdAtMost, "holdAtMost");
  }

  /**
   * None unless asked for: the scenarios that hold renewals check what a renewal's answer does,
   * which a loss pushed by the store's watch would pre-empt. Scenario 20 holds renewals to show
   * that the push alone ends a term, and lets it through.
   */
  @Override
  public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    return passLeaseWatch ? super.watchLease(lease, lost) : Optional.empty();
  }

  /** Lets {@link #watchLease} through to the store from now on. */
  HeldRenewals withLeaseWatch() {
    passLeaseWatch = true;
    return this;
  }

  /** Renewals from now on wait at the door until {@link #letThrough()}. */
  void hold() {
    synchronized (lock) {
      holding = true;
    }
  }

  /** Lets every held renewal go on to the store, and those that come later. */
  void letThrough() {
    synchronized (lock) {
      holding = false;
      lock.notifyAll();
    }
  }

  /** Renewals waiting at the door now. */
  int held() {
    synchronized (lock) {
      return held;
    }
  }

  /**
   * The lease of a renewal waiting at the door now, as its elector has it: releasing it releases
   * the elector's lease.
   */
  Optional<Lease> heldLease() {
    synchronized (lock) {
      return held > 0 ? Optional.of(lastHeld) : Optional.empty();
    }
  }

  private void awaitDoor(Lease lease) {
    String election = lease.election();
    synchronized (lock) {
      long until = System.nanoTime() + holdAtMost.toNanos();
      held++;
      lastHeld = lease;
      try {
        long left;
        while (holding && (left = until - System.nanoTime()) > 0) {
          lock.wait(Math.max(1, left / 1_000_000));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LeaseStoreException(election, "interrupted while the renewal was held", e);
      } finally {
        held--;
      }
    }
  }

  @Override
  public Lease renew(Lease lease) {
    awaitDoor(lease);
    return super.renew(lease);
  }

  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    if (!leases.isEmpty()) {
      awaitDoor(leases.get(0));
    }
    // In chunks the store takes (one at a time where it only renews one by one).
    int limit = delegate().renewBatchLimit();
    List<Renewal> outcomes = new ArrayList<>(leases.size());
    for (int from = 0; from < leases.size(); from += limit) {
      outcomes.addAll(super.renewAll(leases.subList(from, Math.min(leases.size(), from + limit))));
    }
    return outcomes;
  }

  @Override
  public int renewBatchLimit() {
    return batchLimit;
  }

  @Override
  public void close() {
    letThrough();
  }
}
