package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaseStore} in this JVM's memory: for electors within one process, examples and tests.
 * It keeps the whole contract (exclusion, increasing fencing tokens, release, watch) with this
 * process's monotonic clock as the shared clock, which is exact because every candidate is in the
 * same process. Leadership does not survive the process, and other processes cannot see it.
 */
public final class MemoryLeaseStore implements LeaseStore {

  private static final Logger log = LoggerFactory.getLogger(MemoryLeaseStore.class);

  /** Renewals one {@link #renewAll} takes; the lock is held for all of them. */
  private static final int BATCH_LIMIT = 1000;

  /** Expiry timers that are far off wake on this grid, so that one wake-up serves many. */
  private static final long EXPIRY_GRID_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final MonotonicClock clock;
  private final Clock wallClock;
  private final ScheduledExecutorService expiryTimers;
  private final Map<String, Entry> entries = new HashMap<>();
  private final Map<String, List<Runnable>> watchers = new HashMap<>();
  private final Map<String, List<LeaseWatch>> leaseWatches = new HashMap<>();

  /** A leader's watch of its own lease: told once its holder or token is no longer there. */
  private record LeaseWatch(String candidate, long token, Runnable lost) {}

  /**
   * On this process's clocks; its watch reports expiry as well as changes, so followers need not
   * ask.
   */
  public MemoryLeaseStore() {
    this.clock = MonotonicClock.system();
    this.wallClock = Clock.systemUTC();
    this.expiryTimers = SharedExecutors.scheduler();
  }

  /**
   * On the given clocks, which may be a test's own: its watch then reports changes only, since a
   * timer cannot follow a clock that moves by hand.
   */
  public MemoryLeaseStore(MonotonicClock clock, Clock wallClock) {
    this.clock = requireNonNull(clock, "clock");
    this.wallClock = requireNonNull(wallClock, "wallClock");
    this.expiryTimers = null;
  }

  private static final class Entry {
    long lastToken;
    String holder;
    long expiresAtNanos;
    Duration ttl;
    Instant renewedAt;
    ScheduledFuture<?> expiryTimer;

    boolean liveAt(long now) {
      return holder != null && now - expiresAtNanos < 0;
    }
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    requireNonNull(election, "election");
    requireNonNull(candidate, "candidate");
    requireNonNull(ttl, "ttl");
    // Checked before the entry changes: a refused call must not end the caller's current term.
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive, but was " + ttl);
    }
    long t0 = clock.nanoTime();
    Acquisition result;
    synchronized (this) {
      Entry e = entries.computeIfAbsent(election, k -> new Entry());
      if (e.liveAt(t0)) {
        // Also when the holder is this candidate id: a live lease is never granted again.
        return Acquisition.held(record(election, e, t0));
      }
      e.lastToken++;
      e.holder = candidate;
      e.ttl = ttl;
      e.expiresAtNanos = t0 + ttl.toNanos();
      e.renewedAt = wallClock.instant();
      result =
          Acquisition.granted(
              new Lease(election, candidate, FencingToken.of(e.lastToken), ttl, ""));
      watchExpiry(election, e, t0);
    }
    notifyWatchers(election);
    return result;
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    long t0 = clock.nanoTime();
    Instant now = wallClock.instant();
    synchronized (this) {
      return renewLocked(lease, t0, now);
    }
  }

  /** One lock and one clock reading for the whole batch. */
  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    requireNonNull(leases, "leases");
    long t0 = clock.nanoTime();
    Instant now = wallClock.instant();
    List<Renewal> outcomes = new ArrayList<>(leases.size());
    synchronized (this) {
      for (Lease lease : leases) {
        try {
          outcomes.add(Renewal.renewed(renewLocked(requireNonNull(lease, "lease"), t0, now)));
        } catch (LeaseLostException e) {
          outcomes.add(Renewal.failed(e));
        }
      }
    }
    return outcomes;
  }

  @Override
  public int renewBatchLimit() {
    return BATCH_LIMIT;
  }

  private Lease renewLocked(Lease lease, long t0, Instant now) {
    Entry e = entries.get(lease.election());
    if (e == null
        || !e.liveAt(t0)
        || !e.holder.equals(lease.candidate())
        || e.lastToken != lease.token().value()) {
      throw new LeaseLostException(
          lease.election(),
          "lease of " + lease.candidate() + " (token " + lease.token() + ") is gone",
          e == null || !e.liveAt(t0) ? null : e.holder);
    }
    e.expiresAtNanos = t0 + lease.ttl().toNanos();
    e.renewedAt = now;
    return lease;
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    synchronized (this) {
      Entry e = entries.get(lease.election());
      if (e == null
          || e.holder == null
          || !e.holder.equals(lease.candidate())
          || e.lastToken != lease.token().value()) {
        return;
      }
      e.holder = null;
      if (e.expiryTimer != null) {
        e.expiryTimer.cancel(false);
        e.expiryTimer = null;
      }
    }
    notifyWatchers(lease.election());
  }

  @Override
  public synchronized Optional<LeaseRecord> read(String election) {
    long now = clock.nanoTime();
    Entry e = entries.get(election);
    return e != null && e.liveAt(now) ? Optional.of(record(election, e, now)) : Optional.empty();
  }

  private static LeaseRecord record(String election, Entry e, long now) {
    return new LeaseRecord(
        election,
        e.holder,
        FencingToken.of(e.lastToken),
        e.ttl,
        Optional.of(e.renewedAt),
        Optional.of(Duration.ofNanos(Math.max(0, e.expiresAtNanos - now))));
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    requireNonNull(election, "election");
    requireNonNull(changed, "changed");
    synchronized (this) {
      watchers.computeIfAbsent(election, k -> new CopyOnWriteArrayList<>()).add(changed);
      Entry e = entries.get(election);
      if (e != null) {
        watchExpiry(election, e, clock.nanoTime());
      }
    }
    // Once only: the same callback may be registered again, and a second close of this
    // subscription must not remove that other registration.
    AtomicBoolean closed = new AtomicBoolean();
    return Optional.of(
        () -> {
          if (!closed.compareAndSet(false, true)) {
            return;
          }
          synchronized (this) {
            List<Runnable> list = watchers.get(election);
            if (list != null) {
              list.remove(changed);
            }
          }
        });
  }

  private void notifyWatchers(String election) {
    List<Runnable> list;
    List<Runnable> lost = new ArrayList<>();
    synchronized (this) {
      list = watchers.get(election);
      List<LeaseWatch> leases = leaseWatches.get(election);
      if (leases != null) {
        Entry e = entries.get(election);
        for (LeaseWatch w : leases) {
          if (e == null
              || e.holder == null
              || !e.holder.equals(w.candidate())
              || e.lastToken != w.token()) {
            lost.add(w.lost());
          }
        }
      }
    }
    for (Runnable r : lost) {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.warn("A lease watcher of election '{}' failed; the others are still told", election, e);
      }
    }
    if (list != null) {
      for (Runnable r : list) {
        // The change is already made: one watcher's failure (a scheduler shut down, say) must
        // not turn a caller's granted acquisition or release into an exception, nor keep the
        // other watchers from hearing of it.
        try {
          r.run();
        } catch (RuntimeException e) {
          log.warn("A watcher of election '{}' failed; the others are still told", election, e);
        }
      }
    }
  }

  /**
   * Tells {@code lost} when the lease is released, taken under a newer token or {@link #revoke
   * revoked}; its own renewals change nothing it watches. Told on the caller's thread of the change
   * that ended the lease.
   */
  @Override
  public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    requireNonNull(lease, "lease");
    requireNonNull(lost, "lost");
    LeaseWatch watch = new LeaseWatch(lease.candidate(), lease.token().value(), lost);
    boolean goneAlready;
    synchronized (this) {
      leaseWatches.computeIfAbsent(lease.election(), k -> new CopyOnWriteArrayList<>()).add(watch);
      Entry e = entries.get(lease.election());
      goneAlready =
          e == null
              || e.holder == null
              || !e.holder.equals(lease.candidate())
              || e.lastToken != lease.token().value();
    }
    if (goneAlready) {
      // Ended before the watch was set: nothing later would tell.
      lost.run();
    }
    return Optional.of(
        () -> {
          synchronized (this) {
            List<LeaseWatch> list = leaseWatches.get(lease.election());
            if (list != null) {
              list.remove(watch);
            }
          }
        });
  }

  /**
   * Ends the election's lease behind its holder's back, as an operator who deletes it would: the
   * holder's next renewal fails, and the next {@link #tryAcquire} is granted with a higher token.
   * For tests of what a leader does when its lease is taken away.
   */
  public void revoke(String election) {
    requireNonNull(election, "election");
    synchronized (this) {
      Entry e = entries.get(election);
      if (e == null || e.holder == null) {
        return;
      }
      e.holder = null;
      if (e.expiryTimer != null) {
        e.expiryTimer.cancel(false);
        e.expiryTimer = null;
      }
    }
    notifyWatchers(election);
  }

  @Override
  public boolean watchReportsExpiry() {
    return expiryTimers != null;
  }

  /**
   * Keeps one timer per watched election with a live holder, at the holder's expiry. A renewal does
   * not touch it: the timer, finding the lease renewed, sets itself again.
   */
  private void watchExpiry(String election, Entry e, long now) {
    if (expiryTimers == null
        || e.expiryTimer != null
        || !e.liveAt(now)
        || watchers.getOrDefault(election, List.of()).isEmpty()) {
      return;
    }
    long due = e.expiresAtNanos;
    if (due - now > EXPIRY_GRID_NANOS) {
      due -= Math.floorMod(due, EXPIRY_GRID_NANOS);
    }
    e.expiryTimer =
        expiryTimers.schedule(
            () -> expiryDue(election, e), Math.max(0, due - now), TimeUnit.NANOSECONDS);
  }

  private void expiryDue(String election, Entry e) {
    long now = clock.nanoTime();
    synchronized (this) {
      e.expiryTimer = null;
      if (e.holder == null || e.liveAt(now)) {
        watchExpiry(election, e, now);
        return;
      }
    }
    // Off the timer thread: watchers may do more than note the change.
    SharedExecutors.worker().execute(() -> notifyWatchers(election));
  }

  @Override
  public String describe() {
    return "memory";
  }

  @Override
  public void close() {
    synchronized (this) {
      watchers.clear();
      leaseWatches.clear();
      for (Entry e : entries.values()) {
        if (e.expiryTimer != null) {
          e.expiryTimer.cancel(false);
          e.expiryTimer = null;
        }
      }
    }
  }
}
