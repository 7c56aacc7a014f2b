package dev.baton.zookeeper;

import dev.baton.conformance.History;
import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.Subscription;
import java.time.Duration;
import java.util.Optional;

/**
 * A store that records every acquire, renewal and release of one node in a conformance {@link
 * History}, so a test outside the suite gets the suite's checks: no overlapping terms, growing
 * tokens, no grant before another's lease ran out. It does not close the store it wraps.
 */
final class HistoryRecordingStore implements LeaseStore {

  private final String node;
  private final LeaseStore delegate;
  private final History history;

  HistoryRecordingStore(String node, LeaseStore delegate, History history) {
    this.node = node;
    this.delegate = delegate;
    this.history = history;
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    long start = System.nanoTime();
    try {
      Acquisition a = delegate.tryAcquire(election, candidate, ttl);
      Outcome outcome = a.isGranted() ? Outcome.OK : Outcome.REFUSED;
      Lease lease = a.lease().orElse(null);
      history.recordCall(
          new Call(election, node, candidate, Kind.ACQUIRE, start, System.nanoTime(), outcome, lease == null ? null : lease.token(), lease == null ? null : lease.ttl()));
      return a;
    } catch (RuntimeException e) {
      history.recordCall(new Call(election, node, candidate, Kind.ACQUIRE, start, System.nanoTime(), Outcome.FAILED, null, null));
      throw e;
    }
  }

  @Override
  public Lease renew(Lease lease) {
    long start = System.nanoTime();
    try {
      Lease renewed = delegate.renew(lease);
      history.recordCall(call(lease, Kind.RENEW, start, Outcome.OK, renewed.ttl()));
      return renewed;
    } catch (LeaseLostException e) {
      history.recordCall(call(lease, Kind.RENEW, start, Outcome.REFUSED, null));
      throw e;
    } catch (RuntimeException e) {
      history.recordCall(call(lease, Kind.RENEW, start, Outcome.FAILED, null));
      throw e;
    }
  }

  @Override
  public void release(Lease lease) {
    long start = System.nanoTime();
    try {
      delegate.release(lease);
      history.recordCall(call(lease, Kind.RELEASE, start, Outcome.OK, null));
    } catch (RuntimeException e) {
      history.recordCall(call(lease, Kind.RELEASE, start, Outcome.FAILED, null));
      throw e;
    }
  }

  private Call call(Lease lease, Kind kind, long start, Outcome outcome, Duration ttl) {
    return new Call(lease.election(), node, lease.candidate(), kind, start, System.nanoTime(), outcome, lease.token(), ttl);
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
  public boolean watchReportsExpiry() {
    return delegate.watchReportsExpiry();
  }

  @Override
  public void checkElectionName(String election) {
    delegate.checkElectionName(election);
  }

  @Override
  public String describe() {
    return delegate.describe();
  }

  /** The test closes the real store. */
  @Override
  public void close() {}
}
