package dev.baton.benchmarks;

import dev.baton.election.Acquisition;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.Renewal;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A node's view of its store that counts the calls the Elector makes and remembers when the last
 * grant or renewal that the store confirmed began: by the lease contract no other candidate can be
 * granted before that moment plus the lease's TTL, which is what a crash failover is judged
 * against. Closing it closes the wrapped store.
 */
final class RecordingStore extends ForwardingLeaseStore {

  private final AtomicLong calls = new AtomicLong();
  private final AtomicLong renewals = new AtomicLong();
  private volatile long lastConfirmedStartNanos;
  private volatile boolean confirmedAny;

  RecordingStore(LeaseStore delegate) {
    super(delegate);
  }

  long calls() {
    return calls.get();
  }

  long renewals() {
    return renewals.get();
  }

  /** Start of the last grant or renewal the store confirmed; 0 before the first. */
  long lastConfirmedStartNanos() {
    return confirmedAny ? lastConfirmedStartNanos : 0;
  }

  boolean confirmedAny() {
    return confirmedAny;
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    calls.incrementAndGet();
    long t0 = System.nanoTime();
    Acquisition a = delegate().tryAcquire(election, candidate, ttl);
    if (a.isGranted()) {
      confirmed(t0);
    }
    return a;
  }

  @Override
  public Lease renew(Lease lease) {
    calls.incrementAndGet();
    renewals.incrementAndGet();
    long t0 = System.nanoTime();
    Lease renewed = delegate().renew(lease);
    confirmed(t0);
    return renewed;
  }

  /** One call however many leases it renews: a store call is what reaches the server. */
  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    calls.incrementAndGet();
    renewals.addAndGet(leases.size());
    long t0 = System.nanoTime();
    List<Renewal> outcomes = delegate().renewAll(leases);
    if (outcomes.stream().anyMatch(Renewal::isRenewed)) {
      confirmed(t0);
    }
    return outcomes;
  }

  @Override
  public int renewBatchLimit() {
    return delegate().renewBatchLimit();
  }

  private synchronized void confirmed(long t0) {
    if (!confirmedAny || t0 - lastConfirmedStartNanos > 0) {
      lastConfirmedStartNanos = t0;
      confirmedAny = true;
    }
  }

  @Override
  public void release(Lease lease) {
    calls.incrementAndGet();
    delegate().release(lease);
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    calls.incrementAndGet();
    return delegate().read(election);
  }
}
