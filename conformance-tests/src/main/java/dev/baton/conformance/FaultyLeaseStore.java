package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import dev.baton.election.Subscription;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * One node's view of a store that has no network to cut (an in-memory store, an embedded database):
 * it simulates the faults a {@link FaultProxy} causes. Cut: every call fails at once with {@link
 * LeaseStoreException}. Blackholed: every call waits until its call timeout (or a heal) and then
 * fails, and the store never sees it. While not open, watch events are not delivered; a cut
 * delivers one to every watcher, as a watch losing its connection would, and a heal another, as a
 * re-established watch would, since events may have been missed.
 *
 * <p>Never closes the store it wraps: several nodes usually share it.
 */
public final class FaultyLeaseStore extends ForwardingLeaseStore implements FaultInjector {

  private enum Mode {
    OPEN,
    CUT,
    BLACKHOLE
  }

  private final Duration callTimeout;
  private final Object lock = new Object();
  private final Set<Runnable> watchers = ConcurrentHashMap.newKeySet();
  private Mode mode = Mode.OPEN;

  /**
   * @param callTimeout how long a blackholed call waits before it fails; shorter than any renew
   *     deadline it is used with, as a real store's call timeout is
   */
  public FaultyLeaseStore(LeaseStore delegate, Duration callTimeout) {
    super(requireNonNull(delegate, "delegate"));
    this.callTimeout = requireNonNull(callTimeout, "callTimeout");
    if (callTimeout.isNegative() || callTimeout.isZero()) {
      throw new IllegalArgumentException("callTimeout must be positive, but was " + callTimeout);
    }
  }

  @Override
  public void cut() {
    boolean wasCut;
    synchronized (lock) {
      wasCut = mode == Mode.CUT;
      mode = Mode.CUT;
      lock.notifyAll();
    }
    if (!wasCut) {
      // A refused connection is noticed at once, and a watch that loses its connection says so:
      // followers that count on the watch for expiry must learn to try (and fail) on their own.
      watchers.forEach(Runnable::run);
    }
  }

  @Override
  public void blackhole() {
    synchronized (lock) {
      mode = Mode.BLACKHOLE;
    }
  }

  @Override
  public void heal() {
    boolean wasFaulty;
    synchronized (lock) {
      wasFaulty = mode != Mode.OPEN;
      mode = Mode.OPEN;
      lock.notifyAll();
    }
    if (wasFaulty) {
      for (Runnable w : List.copyOf(watchers)) {
        w.run();
      }
    }
  }

  @Override
  public int openConnections() {
    return 0;
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    return call(election, () -> delegate().tryAcquire(election, candidate, ttl));
  }

  @Override
  public Lease renew(Lease lease) {
    return call(lease.election(), () -> delegate().renew(lease));
  }

  /** A fault fails the whole batch, as a broken connection would. */
  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    if (leases.isEmpty()) {
      return List.of();
    }
    return call(leases.get(0).election(), () -> delegate().renewAll(leases));
  }

  @Override
  public void release(Lease lease) {
    call(
        lease.election(),
        () -> {
          delegate().release(lease);
          return null;
        });
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    return call(election, () -> delegate().read(election));
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    requireNonNull(changed, "changed");
    return tracked(changed, delegate().watch(election, whileOpen(changed)));
  }

  @Override
  public Optional<Subscription> follow(String election, String candidate, Runnable changed) {
    requireNonNull(changed, "changed");
    return tracked(changed, delegate().follow(election, candidate, whileOpen(changed)));
  }

  /** Registered even while faulty, like a watch that re-establishes itself, but silent then. */
  private Runnable whileOpen(Runnable changed) {
    return () -> {
      if (isOpen()) {
        changed.run();
      }
    };
  }

  private Optional<Subscription> tracked(Runnable changed, Optional<Subscription> inner) {
    if (inner.isEmpty()) {
      return Optional.empty();
    }
    watchers.add(changed);
    Subscription sub = inner.get();
    return Optional.of(
        () -> {
          watchers.remove(changed);
          sub.close();
        });
  }

  /** Closes this node's watches; the wrapped store stays open. */
  @Override
  public void close() {
    watchers.clear();
  }

  private boolean isOpen() {
    synchronized (lock) {
      return mode == Mode.OPEN;
    }
  }

  private <T> T call(String election, Supplier<T> body) {
    synchronized (lock) {
      if (mode == Mode.BLACKHOLE) {
        long deadline = System.nanoTime() + callTimeout.toNanos();
        long left;
        while (mode == Mode.BLACKHOLE && (left = deadline - System.nanoTime()) > 0) {
          try {
            lock.wait(Math.max(1, left / 1_000_000));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LeaseStoreException(
                election, "interrupted while the store did not answer", e);
          }
        }
        throw new LeaseStoreException(
            election,
            "no answer within the call timeout of " + callTimeout.toMillis() + " ms (blackholed)");
      }
      if (mode == Mode.CUT) {
        throw new LeaseStoreException(election, "connection to the store refused (cut)");
      }
    }
    return body.get();
  }
}
