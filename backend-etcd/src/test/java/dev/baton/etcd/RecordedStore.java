package dev.baton.etcd;

import dev.baton.conformance.History;
import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.Acquisition;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.Subscription;
import java.time.Duration;
import java.util.Optional;

/**
 * A store whose every acquire, renewal and release is timed and written to a conformance {@link
 * History}, so a test outside the suite can check what the suite checks: no overlapping terms,
 * growing tokens, no grant before another's lease ran out, every call within the renew deadline.
 */
final class RecordedStore implements LeaseStore {

  private final String node;
  private final LeaseStore delegate;
  private final History history;

  RecordedStore(String node, LeaseStore delegate, History history) {
    this.node = node;
    this.delegate = delegate;
    this.history = history;
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    long start = System.nanoTime();
    try {
      Acquisition result = delegate.tryAcquire(election, candidate, ttl);
      Optional<Lease> lease = result.lease();
      record(election, candidate, Kind.ACQUIRE, start, lease.isPresent() ? Outcome.OK : Outcome.REFUSED, lease.map(Lease::token).orElse(null), lease.map(Lease::ttl).orElse(null));
      return result;
    } catch (RuntimeException e) {
      record(election, candidate, Kind.ACQUIRE, start, Outcome.FAILED, null, null);
      throw e;
    }
  }

  @Override
  public Lease renew(Lease lease) {
    long start = System.nanoTime();
    try {
      Lease renewed = delegate.renew(lease);
      record(lease.election(), lease.candidate(), Kind.RENEW, start, Outcome.OK, renewed.token(), renewed.ttl());
      return renewed;
    } catch (LeaseLostException e) {
      record(lease.election(), lease.candidate(), Kind.RENEW, start, Outcome.REFUSED, lease.token(), null);
      throw e;
    } catch (RuntimeException e) {
      record(lease.election(), lease.candidate(), Kind.RENEW, start, Outcome.FAILED, lease.token(), null);
      throw e;
    }
  }

  @Override
  public void release(Lease lease) {
    long start = System.nanoTime();
    try {
      delegate.release(lease);
      record(lease.election(), lease.candidate(), Kind.RELEASE, start, Outcome.OK, lease.token(), null);
    } catch (RuntimeException e) {
      // It may have reached etcd: the history counts a failed release as a release.
      record(lease.election(), lease.candidate(), Kind.RELEASE, start, Outcome.FAILED, lease.token(), null);
      throw e;
    }
  }

  private void record(String election, String candidate, Kind kind, long start, Outcome outcome, FencingToken token, Duration ttl) {
    history.recordCall(new Call(election, node, candidate, kind, start, System.nanoTime(), outcome, token, ttl));
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

  @Override
  public void close() {
    delegate.close();
  }
}
