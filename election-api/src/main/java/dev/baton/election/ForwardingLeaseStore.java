package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A store that hands every call to another, for wrappers that change a few: one that records calls,
 * injects faults, or adapts another kind of store. Override what you change; {@link #close()}
 * closes the wrapped store unless overridden, for wrappers that do not own it.
 */
public abstract class ForwardingLeaseStore implements LeaseStore {

  private final LeaseStore delegate;

  protected ForwardingLeaseStore(LeaseStore delegate) {
    this.delegate = requireNonNull(delegate, "delegate");
  }

  /** The wrapped store. */
  public final LeaseStore delegate() {
    return delegate;
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    return delegate.tryAcquire(election, candidate, ttl);
  }

  @Override
  public Lease renew(Lease lease) {
    return delegate.renew(lease);
  }

  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    return delegate.renewAll(leases);
  }

  @Override
  public int renewBatchLimit() {
    return delegate.renewBatchLimit();
  }

  @Override
  public void release(Lease lease) {
    delegate.release(lease);
  }

  @Override
  public void releaseUnanswered(String election, String candidate) {
    delegate.releaseUnanswered(election, candidate);
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    return delegate.read(election);
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    return delegate.watch(election, changed);
  }

  @Override
  public Optional<Subscription> follow(String election, String candidate, Runnable changed) {
    return delegate.follow(election, candidate, changed);
  }

  @Override
  public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    return delegate.watchLease(lease, lost);
  }

  @Override
  public boolean watchReportsExpiry() {
    return delegate.watchReportsExpiry();
  }

  @Override
  public Optional<Duration> renewalPeriod(Lease lease) {
    return delegate.renewalPeriod(lease);
  }

  @Override
  public void checkElectionName(String election) {
    delegate.checkElectionName(election);
  }

  @Override
  public void checkLeaseDuration(Duration leaseDuration) {
    delegate.checkLeaseDuration(leaseDuration);
  }

  @Override
  public String describe() {
    return delegate.describe();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
