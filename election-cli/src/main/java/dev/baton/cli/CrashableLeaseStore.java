package dev.baton.cli;

import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Subscription;
import java.time.Duration;
import java.util.Optional;

/**
 * One demo node's way to the database, which the demo can cut as a crash would: from then on
 * nothing of this node reaches the database, in particular no release, so its lease stays until
 * the database sees it expire.
 */
final class CrashableLeaseStore implements LeaseStore {

  private final LeaseStore store;
  private volatile boolean crashed;

  CrashableLeaseStore(LeaseStore store) {
    this.store = store;
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
    return store.tryAcquire(election, candidate, ttl);
  }

  @Override
  public Lease renew(Lease lease) {
    reachable(lease.election());
    return store.renew(lease);
  }

  @Override
  public void release(Lease lease) {
    // A crashed process sends nothing; its lease expires on the database's clock.
    if (!crashed) {
      store.release(lease);
    }
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    reachable(election);
    return store.read(election);
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    return store.watch(election, changed);
  }

  @Override
  public boolean watchReportsExpiry() {
    return store.watchReportsExpiry();
  }

  @Override
  public void checkElectionName(String election) {
    store.checkElectionName(election);
  }

  @Override
  public String describe() {
    return store.describe();
  }

  @Override
  public void close() {
    store.close();
  }
}
