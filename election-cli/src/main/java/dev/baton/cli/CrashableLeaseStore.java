package dev.baton.cli;

import dev.baton.election.Acquisition;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * One demo node's way to the database, which the demo can cut as a crash would: from then on
 * nothing of this node reaches the database, in particular no release, so its lease stays until the
 * database sees it expire.
 */
final class CrashableLeaseStore extends ForwardingLeaseStore {

  private volatile boolean crashed;

  CrashableLeaseStore(LeaseStore store) {
    super(store);
  }

  void crash() {
    crashed = true;
  }

  private void reachable(String election) {
    if (crashed) {
      throw new LeaseStoreException(election, "this demo node has crashed");
    }
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    reachable(election);
    return super.tryAcquire(election, candidate, ttl);
  }

  @Override
  public Lease renew(Lease lease) {
    reachable(lease.election());
    return super.renew(lease);
  }

  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    if (!leases.isEmpty()) {
      reachable(leases.get(0).election());
    }
    return super.renewAll(leases);
  }

  @Override
  public void release(Lease lease) {
    // A crashed process sends nothing; its lease expires on the database's clock.
    if (!crashed) {
      super.release(lease);
    }
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    reachable(election);
    return super.read(election);
  }
}
