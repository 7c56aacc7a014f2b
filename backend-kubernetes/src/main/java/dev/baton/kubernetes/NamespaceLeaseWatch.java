package dev.baton.kubernetes;

import dev.baton.election.RecordStore.RecordWatcher;
import dev.baton.election.Subscription;
import dev.baton.election.VersionedRecord;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fabric8 watch of every Lease in the store's namespace, shared by all the store's watchers
 * (followers' and leaders' alike) and handed out by Lease name. A watch per Lease cost a connection
 * each: at 1,000 elections in one process they no longer all got led. This costs one connection per
 * store, and delivers the namespace's other Leases too, which are kept (one object each, for a new
 * watcher to start from) but handed to nobody.
 *
 * <p>It opens on the first watcher and stays open until the store closes. A new watcher is first
 * handed the Lease as the watch last delivered it, if that is the version this process last read or
 * wrote too (or it read and wrote none): a version older than its own write could show a leader a
 * loss that is none, and the next event brings the news anyway. fabric8 resumes a dropped watch
 * from the last resourceVersion by itself; when it gives up (the server forgot that version, say),
 * every watcher is told the watch was lost, the Leases kept are forgotten, and a fresh watch begins
 * with every Lease as it is (ADDED). A leader's Lease that the watch has not delivered once it is
 * open (one deleted before it opened, or before the leader's watcher came) is read once, so that
 * its absence is told too.
 *
 * <p>Watchers are handed events under this object's monitor, so that a new watcher's first version
 * and the events that follow it arrive in order; they must not block (as {@link RecordWatcher}
 * says).
 */
final class NamespaceLeaseWatch implements Watcher<Lease> {

  private static final Logger log = LoggerFactory.getLogger(NamespaceLeaseWatch.class);

  private static final Duration RETRY = Duration.ofSeconds(1);

  private enum State {
    IDLE,
    OPENING,
    OPEN,
    CLOSED
  }

  private final Function<Watcher<Lease>, Watch> open;
  private final Function<String, Optional<Lease>> read;
  private final Executor opener;
  private final String where;

  /** The Leases as this watch last delivered them, by name; read without the monitor. */
  private final ConcurrentMap<String, Lease> delivered = new ConcurrentHashMap<>();

  // Guarded by this object's monitor.
  private final Map<String, List<Watching>> watching = new HashMap<>();
  private State state = State.IDLE;
  private Watch current;
  private boolean failing;

  /**
   * @param open opens a fabric8 watch of the namespace's Leases for the given watcher
   * @param read reads one Lease by name, for one the watch has not delivered
   * @param opener runs the opening and those reads, which can hang as long as the server does
   * @param where the namespace and server, for logs
   */
  NamespaceLeaseWatch(
      Function<Watcher<Lease>, Watch> open,
      Function<String, Optional<Lease>> read,
      Executor opener,
      String where) {
    this.open = open;
    this.read = read;
    this.opener = opener;
    this.where = where;
  }

  /** The Lease named {@code name} as this watch last delivered it. */
  Optional<Lease> delivered(String name) {
    return Optional.ofNullable(delivered.get(name));
  }

  /**
   * Hands {@code watcher} every version of the Lease {@code name} from now on, after the one this
   * watch last delivered if that is {@code known} (the version this process last read or wrote, or
   * null for none). Call {@link #start} to have the watch opened.
   */
  synchronized Subscription add(String name, RecordWatcher watcher, Lease known) {
    Watching w = new Watching(name, watcher);
    if (state == State.CLOSED) {
      return w;
    }
    watching.computeIfAbsent(name, k -> new ArrayList<>()).add(w);
    Lease last = delivered.get(name);
    if (last != null
        && (known == null
            || last.getMetadata()
                .getResourceVersion()
                .equals(known.getMetadata().getResourceVersion()))) {
      w.seen(Optional.of(KubernetesRecordStore.versioned(last)));
    }
    if (failing) {
      w.lost(); // what it would have heard is not coming until the watch is back
    }
    if (state == State.OPEN && last == null && watcher.watchesItsOwnLease()) {
      readSoon(List.of(name));
    }
    return w;
  }

  /** Opens the watch, off the caller's thread, unless it is open or opening. */
  void start() {
    synchronized (this) {
      if (state != State.IDLE) {
        return;
      }
      state = State.OPENING;
    }
    openSoon();
  }

  private void openSoon() {
    try {
      opener.execute(this::open);
    } catch (RejectedExecutionException e) {
      log.debug("not watching the Leases of {}: the store is closed", where);
    }
  }

  private void open() {
    synchronized (this) {
      if (state != State.OPENING) {
        return;
      }
    }
    try {
      Watch watch = open.apply(this);
      boolean closed;
      synchronized (this) {
        closed = state == State.CLOSED;
        if (!closed) {
          current = watch;
          state = State.OPEN;
          if (failing) {
            log.info("watching the Leases of {} again", where);
            failing = false;
          }
        }
      }
      if (closed) {
        watch.close();
        return;
      }
      readUndelivered(leadersNames());
    } catch (RuntimeException e) {
      synchronized (this) {
        if (state == State.CLOSED) {
          return;
        }
        if (!failing) {
          log.warn(
              "cannot watch the Leases of {}, retrying every {} ms (followers read meanwhile)",
              where,
              RETRY.toMillis(),
              e);
          failing = true;
          lostAll();
        } else {
          log.debug("watch of the Leases of {} still failing", where, e);
        }
      }
      // The delayed executor only queues the attempt on the opener, so the JDK's timer thread
      // runs it; a bare delayedExecutor would start a thread for each retry (fewer than 3 cores).
      CompletableFuture.delayedExecutor(RETRY.toMillis(), TimeUnit.MILLISECONDS, Runnable::run)
          .execute(this::openSoon);
    }
  }

  @Override
  public synchronized void eventReceived(Action action, Lease lease) {
    if (state == State.CLOSED) {
      return;
    }
    switch (action) {
      case ADDED, MODIFIED -> {
        String name = lease.getMetadata().getName();
        delivered.put(name, lease);
        tell(name, Optional.of(KubernetesRecordStore.versioned(lease)));
      }
      case DELETED -> {
        String name = lease.getMetadata().getName();
        delivered.remove(name);
        tell(name, Optional.empty());
      }
      case BOOKMARK -> {
        // Only a resourceVersion to resume from, which fabric8 keeps.
      }
      default -> lostAll(); // ERROR: fabric8 would normally close the watch instead
    }
  }

  @Override
  public void onClose(WatcherException cause) {
    synchronized (this) {
      if (state == State.CLOSED) {
        return;
      }
      log.debug("watch of the Leases of {} closed, opening a new one", where, cause);
      current = null;
      state = State.OPENING;
      // A new watch delivers every Lease afresh; one deleted meanwhile would otherwise stay here.
      delivered.clear();
      lostAll();
    }
    openSoon();
  }

  /** Stops watching, for good: the store is closing. */
  void close() {
    Watch watch;
    synchronized (this) {
      state = State.CLOSED;
      watch = current;
      current = null;
      watching.clear();
      delivered.clear();
    }
    if (watch != null) {
      watch.close();
    }
  }

  /** The Leases a leader of this store watches for its loss. */
  private synchronized List<String> leadersNames() {
    return watching.entrySet().stream()
        .filter(e -> e.getValue().stream().anyMatch(w -> w.watcher.watchesItsOwnLease()))
        .map(Map.Entry::getKey)
        .toList();
  }

  private void readSoon(List<String> names) {
    try {
      opener.execute(() -> readUndelivered(names));
    } catch (RejectedExecutionException e) {
      log.debug("not reading Leases of {}: the store is closed", where);
    }
  }

  /**
   * Reads each of {@code names} that is watched and that this watch has not delivered, and hands
   * what it finds (or that there is none) to its watchers, unless the watch delivered it meanwhile.
   * A watch begins at the server's present: a Lease deleted before it opened, or whose deletion
   * went by before its leader's watcher came, is never named by it, and the leader would learn of
   * the loss only at its next renewal. What a read finds is no older than the leader's own write,
   * so it can only tell the truth: an absent Lease is gone. Followers are not read for: they send
   * nothing while they follow, and a Lease they never see ends for them as it runs out.
   */
  private void readUndelivered(List<String> names) {
    for (String name : names) {
      synchronized (this) {
        if (state != State.OPEN || delivered.containsKey(name) || !watching.containsKey(name)) {
          continue;
        }
      }
      Optional<Lease> now;
      try {
        now = read.apply(name);
      } catch (RuntimeException e) {
        // The watch delivers what changes from here on, and renewals cover the rest.
        log.debug("cannot read Lease {} of {} for its watchers", name, where, e);
        continue;
      }
      synchronized (this) {
        if (state != State.OPEN || delivered.containsKey(name)) {
          continue;
        }
        now.ifPresent(lease -> delivered.put(name, lease));
        tell(name, now.map(KubernetesRecordStore::versioned));
      }
    }
  }

  private void tell(String name, Optional<VersionedRecord> record) {
    List<Watching> those = watching.get(name);
    if (those != null) {
      List.copyOf(those).forEach(w -> w.seen(record));
    }
  }

  private void lostAll() {
    watching.values().stream().flatMap(List::stream).toList().forEach(Watching::lost);
  }

  /** One watcher of one Lease. */
  private final class Watching implements Subscription {
    private final String name;
    private final RecordWatcher watcher;

    Watching(String name, RecordWatcher watcher) {
      this.name = name;
      this.watcher = watcher;
    }

    void seen(Optional<VersionedRecord> record) {
      try {
        watcher.seen(record);
      } catch (RuntimeException e) {
        log.warn("a watcher of Lease {} in {} failed", name, where, e);
      }
    }

    void lost() {
      try {
        watcher.lost();
      } catch (RuntimeException e) {
        log.warn("a watcher of Lease {} in {} failed", name, where, e);
      }
    }

    @Override
    public void close() {
      synchronized (NamespaceLeaseWatch.this) {
        List<Watching> those = watching.get(name);
        if (those != null && those.remove(this) && those.isEmpty()) {
          watching.remove(name);
        }
      }
    }
  }
}
