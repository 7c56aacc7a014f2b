package dev.baton.election;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A {@link MemoryLeaseStore} on the test's fake clock whose calls can be made to fail or to be
 * answered only when the test says, and which counts and records what the elector asked.
 */
class ScriptedStore implements LeaseStore {

  final MemoryLeaseStore memory;
  final AtomicInteger acquires = new AtomicInteger();
  final AtomicInteger renewals = new AtomicInteger();

  /** Renewals the store answered (with a lease or a refusal), not counting scripted failures. */
  final AtomicInteger renewalsAnswered = new AtomicInteger();

  /** When set, grants report this TTL instead of the one applied, as a store that clamps would. */
  volatile Duration grantedTtl;

  final List<String> calls = new ArrayList<>();
  volatile Supplier<RuntimeException> failNext;
  volatile boolean failAll;
  volatile boolean canWatch = true;
  volatile boolean watchReportsExpiry;
  final java.util.concurrent.atomic.AtomicInteger openWatches =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Watches ever opened, closed or not. */
  final java.util.concurrent.atomic.AtomicInteger watchesOpened =
      new java.util.concurrent.atomic.AtomicInteger();

  ScriptedStore(FakeClock clock) {
    this(new MemoryLeaseStore(clock, java.time.Clock.systemUTC()));
  }

  /** Another node's view of the same leases: faults scripted here affect only this node. */
  ScriptedStore(MemoryLeaseStore shared) {
    this.memory = shared;
  }

  /**
   * Blocks the next calls of this kind until {@link java.util.concurrent.CountDownLatch#countDown}.
   */
  volatile java.util.concurrent.CountDownLatch acquireGate;

  volatile java.util.concurrent.CountDownLatch renewGate;

  private static void pass(java.util.concurrent.CountDownLatch gate) {
    if (gate == null) {
      return;
    }
    try {
      gate.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException("e", "interrupted");
    }
  }

  private void maybeFail() {
    Supplier<RuntimeException> f = failNext;
    if (failAll) {
      throw new LeaseStoreException("e", "store down (scripted)");
    }
    if (f != null) {
      failNext = null;
      throw f.get();
    }
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    acquires.incrementAndGet();
    record("acquire " + candidate);
    pass(acquireGate);
    maybeFail();
    Acquisition a = memory.tryAcquire(election, candidate, ttl);
    Duration reported = grantedTtl;
    if (reported != null && a.isGranted()) {
      Lease l = a.lease().orElseThrow();
      return Acquisition.granted(
          new Lease(l.election(), l.candidate(), l.token(), reported, l.handle()));
    }
    return a;
  }

  @Override
  public Lease renew(Lease lease) {
    renewals.incrementAndGet();
    record("renew " + lease.candidate());
    pass(renewGate);
    maybeFail();
    try {
      return memory.renew(lease);
    } finally {
      renewalsAnswered.incrementAndGet();
    }
  }

  @Override
  public void release(Lease lease) {
    record("release " + lease.candidate() + " " + lease.token());
    maybeFail();
    memory.release(lease);
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    return memory.read(election);
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    if (!canWatch) {
      return Optional.empty();
    }
    Subscription inner = memory.watch(election, changed).orElseThrow();
    openWatches.incrementAndGet();
    watchesOpened.incrementAndGet();
    java.util.concurrent.atomic.AtomicBoolean closed =
        new java.util.concurrent.atomic.AtomicBoolean();
    return Optional.of(
        () -> {
          if (closed.compareAndSet(false, true)) {
            openWatches.decrementAndGet();
            inner.close();
          }
        });
  }

  /** Whether {@link #watchLease} is offered; its subscriptions open now. */
  volatile boolean canWatchLease = true;

  final AtomicInteger openLeaseWatches = new AtomicInteger();

  /** The last lease loss callback handed to {@link #watchLease}, for a test to call spuriously. */
  volatile Runnable lastLeaseWatcher;

  @Override
  public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    if (!canWatchLease) {
      return Optional.empty();
    }
    lastLeaseWatcher = lost;
    Subscription inner = memory.watchLease(lease, lost).orElseThrow();
    openLeaseWatches.incrementAndGet();
    java.util.concurrent.atomic.AtomicBoolean closed =
        new java.util.concurrent.atomic.AtomicBoolean();
    return Optional.of(
        () -> {
          if (closed.compareAndSet(false, true)) {
            openLeaseWatches.decrementAndGet();
            inner.close();
          }
        });
  }

  @Override
  public boolean watchReportsExpiry() {
    return watchReportsExpiry;
  }

  /** When set, what {@link #renewalPeriod} answers. */
  volatile Duration renewalPeriod;

  @Override
  public Optional<Duration> renewalPeriod(Lease lease) {
    return Optional.ofNullable(renewalPeriod);
  }

  synchronized void record(String call) {
    calls.add(call);
  }

  synchronized List<String> calls() {
    return List.copyOf(calls);
  }

  @Override
  public String describe() {
    return "scripted";
  }

  @Override
  public void close() {}
}
