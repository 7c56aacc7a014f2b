package dev.baton.conformance;

import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.Acquisition;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.Renewal;
import dev.baton.election.Subscription;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One node's store as the suite sees it: every call is timed and recorded in the {@link History},
 * single answers are checked against the contract on the spot, and live watches are counted.
 */
final class RecordingLeaseStore extends ForwardingLeaseStore {

  private final String node;
  private final History history;
  private final Map<String, AtomicInteger> liveWatches = new ConcurrentHashMap<>();
  private final AtomicInteger callsInFlight = new AtomicInteger();

  RecordingLeaseStore(String node, LeaseStore delegate, History history) {
    super(delegate);
    this.node = node;
    this.history = history;
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    callsInFlight.incrementAndGet();
    try {
      return recordAcquire(election, candidate, ttl);
    } finally {
      callsInFlight.decrementAndGet();
    }
  }

  private Acquisition recordAcquire(String election, String candidate, Duration ttl) {
    long start = System.nanoTime();
    Acquisition result;
    try {
      result = delegate().tryAcquire(election, candidate, ttl);
    } catch (RuntimeException e) {
      history.recordCall(
          new Call(
              election,
              node,
              candidate,
              Kind.ACQUIRE,
              start,
              System.nanoTime(),
              Outcome.FAILED,
              null,
              null));
      throw e;
    }
    long end = System.nanoTime();
    if (result.isGranted()) {
      Lease lease = result.lease().orElseThrow();
      history.recordCall(
          new Call(
              election,
              node,
              candidate,
              Kind.ACQUIRE,
              start,
              end,
              Outcome.OK,
              lease.token(),
              lease.ttl()));
      if (!lease.election().equals(election) || !lease.candidate().equals(candidate)) {
        history.recordBreach(
            election,
            "tryAcquire by "
                + candidate
                + " returned a lease for "
                + lease.candidate()
                + " of '"
                + lease.election()
                + "'");
      }
      if (lease.ttl().compareTo(ttl) < 0) {
        history.recordBreach(
            election,
            "tryAcquire asked for ttl " + ttl + " but the lease has the shorter " + lease.ttl());
      }
    } else {
      LeaseRecord holder = result.holder().orElseThrow();
      history.recordCall(
          new Call(
              election, node, candidate, Kind.ACQUIRE, start, end, Outcome.REFUSED, null, null));
      if (holder.holder().equals(candidate)) {
        checkRefusedByOwnId(election, candidate, holder, start);
      }
    }
    return result;
  }

  /**
   * A refusal that names the caller's own id is right while a live lease of that id exists that
   * this call did not get (another elector using the id, or the caller's own earlier term whose
   * release failed): one granted under that token and not released before this call began, or one
   * whose grant went unanswered (an acquire that failed may have been granted). How long such a
   * lease lives is the store's judgement (its clock, or observed time), so expiry is not checked
   * here; a lease that was released is gone for sure.
   */
  private void checkRefusedByOwnId(
      String election, String candidate, LeaseRecord holder, long start) {
    List<Call> ofId =
        history.calls(election, c -> c.candidate().equals(candidate) && c.endNanos() - start < 0);
    boolean granted = ofId.stream().anyMatch(c -> c.isGrant() && c.token().equals(holder.token()));
    boolean unanswered =
        ofId.stream().anyMatch(c -> c.kind() == Kind.ACQUIRE && c.outcome() == Outcome.FAILED);
    boolean released =
        ofId.stream()
            .anyMatch(
                c ->
                    c.kind() == Kind.RELEASE
                        && c.outcome() == Outcome.OK
                        && c.token().equals(holder.token()));
    if (released || !(granted || unanswered)) {
      history.recordBreach(
          election,
          "tryAcquire by "
              + candidate
              + " answered 'held by "
              + candidate
              + "' under token "
              + holder.token()
              + ", a lease of that id that "
              + (released ? "was released before the call" : "was never granted"));
    }
  }

  @Override
  public Lease renew(Lease lease) {
    callsInFlight.incrementAndGet();
    try {
      return recordRenew(lease);
    } finally {
      callsInFlight.decrementAndGet();
    }
  }

  private Lease recordRenew(Lease lease) {
    long start = System.nanoTime();
    Lease renewed;
    try {
      renewed = delegate().renew(lease);
    } catch (RuntimeException e) {
      recordRenewal(lease, start, Renewal.failed(e));
      throw e;
    }
    recordRenewal(lease, start, Renewal.renewed(renewed));
    return renewed;
  }

  /** Each lease of a batch is recorded as a renewal of its own that started with the batch. */
  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    callsInFlight.incrementAndGet();
    try {
      long start = System.nanoTime();
      List<Renewal> outcomes;
      try {
        outcomes = delegate().renewAll(leases);
      } catch (RuntimeException e) {
        leases.forEach(l -> recordRenewal(l, start, Renewal.failed(e)));
        throw e;
      }
      if (outcomes.size() != leases.size()) {
        leases.forEach(
            l ->
                history.recordBreach(
                    l.election(),
                    "renewAll of "
                        + leases.size()
                        + " leases answered "
                        + outcomes.size()
                        + " outcomes"));
        return outcomes;
      }
      for (int i = 0; i < leases.size(); i++) {
        recordRenewal(leases.get(i), start, outcomes.get(i));
      }
      return outcomes;
    } finally {
      callsInFlight.decrementAndGet();
    }
  }

  private void recordRenewal(Lease lease, long start, Renewal outcome) {
    if (outcome.failure().isPresent()) {
      Outcome o =
          outcome.failure().get() instanceof LeaseLostException ? Outcome.REFUSED : Outcome.FAILED;
      history.recordCall(call(lease, Kind.RENEW, start, o, null));
      return;
    }
    Lease renewed = outcome.lease().orElseThrow();
    history.recordCall(call(lease, Kind.RENEW, start, Outcome.OK, renewed.ttl()));
    if (!renewed.token().equals(lease.token())
        || !renewed.candidate().equals(lease.candidate())
        || !renewed.election().equals(lease.election())) {
      history.recordBreach(
          lease.election(),
          "renew of token "
              + lease.token()
              + " by "
              + lease.candidate()
              + " returned token "
              + renewed.token()
              + " of "
              + renewed.candidate()
              + " in '"
              + renewed.election()
              + "'");
    }
    if (renewed.ttl().compareTo(lease.ttl()) < 0) {
      history.recordBreach(
          lease.election(), "renew shortened the ttl from " + lease.ttl() + " to " + renewed.ttl());
    }
  }

  @Override
  public void release(Lease lease) {
    callsInFlight.incrementAndGet();
    long start = System.nanoTime();
    try {
      delegate().release(lease);
    } catch (RuntimeException e) {
      history.recordCall(call(lease, Kind.RELEASE, start, Outcome.FAILED, null));
      throw e;
    } finally {
      callsInFlight.decrementAndGet();
    }
    history.recordCall(call(lease, Kind.RELEASE, start, Outcome.OK, null));
  }

  /** Acquires, renewals and releases that entered this node's store and have not returned. */
  int callsInFlight() {
    return callsInFlight.get();
  }

  private Call call(Lease lease, Kind kind, long start, Outcome outcome, Duration ttl) {
    return new Call(
        lease.election(),
        node,
        lease.candidate(),
        kind,
        start,
        System.nanoTime(),
        outcome,
        lease.token(),
        ttl);
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    return counted(election, delegate().watch(election, changed));
  }

  @Override
  public Optional<Subscription> follow(String election, String candidate, Runnable changed) {
    return counted(election, delegate().follow(election, candidate, changed));
  }

  private Optional<Subscription> counted(String election, Optional<Subscription> inner) {
    if (inner.isEmpty()) {
      return inner;
    }
    AtomicInteger live = liveWatches.computeIfAbsent(election, k -> new AtomicInteger());
    live.incrementAndGet();
    Subscription sub = inner.get();
    java.util.concurrent.atomic.AtomicBoolean closed =
        new java.util.concurrent.atomic.AtomicBoolean();
    return Optional.of(
        () -> {
          if (closed.compareAndSet(false, true)) {
            live.decrementAndGet();
          }
          sub.close();
        });
  }

  /** Watches of {@code election} opened through this node and not closed yet. */
  int liveWatches(String election) {
    AtomicInteger live = liveWatches.get(election);
    return live == null ? 0 : live.get();
  }

  /** The node's store belongs to the fixture, which closes it. */
  @Override
  public void close() {}
}
