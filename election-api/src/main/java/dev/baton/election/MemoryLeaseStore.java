package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaseStore} in this JVM's memory: for electors within one process, examples and tests.
 * It keeps the whole contract (exclusion, increasing fencing tokens, release, watch) with this
 * process's monotonic clock as the shared clock, which is exact because every candidate is in
 * the same process. Leadership does not survive the process, and other processes cannot see it.
 */
public final class MemoryLeaseStore implements LeaseStore {

  private static final Logger log = LoggerFactory.getLogger(MemoryLeaseStore.class);

  private final MonotonicClock clock;
  private final Clock wallClock;
  private final Map<String, Entry> entries = new HashMap<>();
  private final Map<String, List<Runnable>> watchers = new HashMap<>();

  public MemoryLeaseStore() {
    this(MonotonicClock.system(), Clock.systemUTC());
  }

  public MemoryLeaseStore(MonotonicClock clock, Clock wallClock) {
    this.clock = requireNonNull(clock, "clock");
    this.wallClock = requireNonNull(wallClock, "wallClock");
  }

  private static final class Entry {
    long lastToken;
    String holder;
    long expiresAtNanos;
    Duration ttl;
    Instant renewedAt;

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
      if (e.liveAt(t0) && !e.holder.equals(candidate)) {
        return Acquisition.held(record(election, e, t0));
      }
      e.lastToken++;
      e.holder = candidate;
      e.ttl = ttl;
      e.expiresAtNanos = t0 + ttl.toNanos();
      e.renewedAt = wallClock.instant();
      result = Acquisition.granted(new Lease(election, candidate, FencingToken.of(e.lastToken), ttl, ""));
    }
    notifyWatchers(election);
    return result;
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    long t0 = clock.nanoTime();
    synchronized (this) {
      Entry e = entries.get(lease.election());
      if (e == null || !e.liveAt(t0) || !e.holder.equals(lease.candidate()) || e.lastToken != lease.token().value()) {
        throw new LeaseLostException(
            lease.election(), "lease of " + lease.candidate() + " (token " + lease.token() + ") is gone", e == null || !e.liveAt(t0) ? null : e.holder);
      }
      e.expiresAtNanos = t0 + lease.ttl().toNanos();
      e.renewedAt = wallClock.instant();
      return lease;
    }
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    synchronized (this) {
      Entry e = entries.get(lease.election());
      if (e == null || e.holder == null || !e.holder.equals(lease.candidate()) || e.lastToken != lease.token().value()) {
        return;
      }
      e.holder = null;
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
    synchronized (this) {
      list = watchers.get(election);
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

  @Override
  public String describe() {
    return "memory";
  }

  @Override
  public void close() {
    synchronized (this) {
      watchers.clear();
    }
  }
}
