package dev.baton.etcd;

import dev.baton.election.Subscription;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one election key and tells the follower when it changed (PUT or DELETE, which includes
 * expiry). Before it does, it hands the key as the event showed it to the store, so that the
 * follower's next acquisition can go straight to the transaction that fits (taking over a released
 * key, creating a deleted one) instead of reading the key first. When the watch breaks, it tells
 * the store to forget what it saw and the follower once, since events may have been missed, and
 * watches again from the revision after the last one it saw.
 *
 * <p>jetcd registers a watch asynchronously, so a watch that starts "from now" only covers changes
 * after etcd confirms it. Until then a release could go unseen, and a follower on etcd has nothing
 * else to wake it. So the follower is also told once when such a watch is confirmed: it looks
 * again, and from then on the watch has it covered.
 *
 * <p>jetcd also waits for a ready connection before it sends a watch, without a word and without
 * end, both for a new watch and when it resumes one that broke. A follower that looked once more
 * after the break, and was answered by a member that died a moment later, would then wait for the
 * whole outage, neither told of changes nor trying for itself. So a watch that etcd has not
 * confirmed within the store's call timeout (after jetcd's own pause before resuming, for a broken
 * one) tells the follower once: it looks, and if etcd does not answer, it polls as followers do
 * when a call fails, until the watch is confirmed.
 */
final class ElectionWatch implements Watch.Listener, Subscription {

  /** Where the watch reports what it saw of the key; every call may come from jetcd's threads. */
  interface Sightings {
    /** The key as of {@code revision}: its value, or null when it was deleted then. */
    void seen(String election, long revision, KeyValue current);

    /** What was seen may be out of date: the watch broke or ended. */
    void forget(String election);
  }

  private static final Logger log = LoggerFactory.getLogger(ElectionWatch.class);

  /**
   * How long jetcd waits before it resumes a watch that broke (WatchImpl's reschedule); a watch it
   * ended is started again after the same pause.
   */
  private static final Duration RESUME_DELAY = Duration.ofMillis(500);

  /**
   * For this backend's delayed tasks that only start asynchronous work or take a lock (the check
   * for an overdue confirmation, a watch's restart, a background delete): they run on the JDK's
   * timer thread. Without an executor they would get a thread each where the common pool is too
   * small to be used (fewer than 3 cores), and an outage ends every election's watch at once.
   */
  static final Executor ON_TIMER_THREAD = Runnable::run;

  private final Watch watchClient;
  private final String election;
  private final ByteSequence key;
  private final Runnable changed;
  private final Sightings sightings;
  private final Consumer<ElectionWatch> onClose;
  private final Duration confirmWithin;

  private boolean closed;
  private Watch.Watcher watcher;

  /** The revision to resume from; 0 means "from now". */
  private long nextRevision;

  /** A watch from now was asked for and etcd has not confirmed it yet. */
  private boolean unconfirmedFromNow;

  /**
   * Counts the registrations etcd is to confirm (our starts, jetcd's resumes), so that a check for
   * an overdue confirmation concerns only its own.
   */
  private long registrations;

  /** The last registration has not been confirmed yet. */
  private boolean unconfirmed;

  ElectionWatch(
      Watch watchClient,
      String election,
      ByteSequence key,
      Runnable changed,
      Sightings sightings,
      Consumer<ElectionWatch> onClose,
      Duration confirmWithin) {
    this.watchClient = watchClient;
    this.election = election;
    this.key = key;
    this.changed = changed;
    this.sightings = sightings;
    this.onClose = onClose;
    this.confirmWithin = confirmWithin;
  }

  synchronized void start() {
    if (closed) {
      return;
    }
    WatchOption.Builder option =
        WatchOption.builder()
            // A member cut off from its cluster cancels the watch instead of going silent.
            .withRequireLeader(true)
            // The created notification carries the revision to resume from after a break.
            .withCreateNotify(true);
    if (nextRevision > 0) {
      option.withRevision(nextRevision);
    } else {
      unconfirmedFromNow = true;
    }
    watcher = watchClient.watch(key, option.build(), this);
    expectConfirmationWithin(confirmWithin);
  }

  /** Called holding the lock. */
  private void expectConfirmationWithin(Duration delay) {
    unconfirmed = true;
    long registration = ++registrations;
    CompletableFuture.delayedExecutor(delay.toNanos(), TimeUnit.NANOSECONDS, ON_TIMER_THREAD)
        .execute(() -> confirmationOverdue(registration));
  }

  private void confirmationOverdue(long registration) {
    synchronized (this) {
      if (closed || registration != registrations || !unconfirmed) {
        return;
      }
    }
    log.debug(
        "Watch of election '{}' not confirmed by etcd within {}; telling the follower to look",
        election,
        confirmWithin);
    fire();
  }

  @Override
  public void onNext(WatchResponse response) {
    boolean confirmedFromNow;
    synchronized (this) {
      if (closed) {
        return;
      }
      long revision = response.getHeader().getRevision();
      if (revision + 1 > nextRevision) {
        nextRevision = revision + 1;
      }
      if (response.isCreatedNotify()) {
        unconfirmed = false;
      }
      confirmedFromNow = unconfirmedFromNow && response.isCreatedNotify();
      if (confirmedFromNow) {
        unconfirmedFromNow = false;
      }
    }
    if (response.getEvents().isEmpty()) {
      if (confirmedFromNow) {
        fire();
      }
      return;
    }
    for (WatchEvent event : response.getEvents()) {
      KeyValue kv = event.getKeyValue();
      sightings.seen(
          election,
          kv.getModRevision(),
          event.getEventType() == WatchEvent.EventType.PUT ? kv : null);
    }
    fire();
  }

  @Override
  public void onError(Throwable error) {
    synchronized (this) {
      if (closed) {
        return;
      }
      if (String.valueOf(error.getMessage()).contains("compacted")) {
        // The revision to resume from is gone; resume from now (the callback below covers the gap).
        nextRevision = 0;
      }
      // jetcd resumes the watch itself (or ends it, and onCompleted starts it again).
      expectConfirmationWithin(RESUME_DELAY.plus(confirmWithin));
    }
    log.debug(
        "Watch of election '{}' broke, telling the follower and watching again: {}",
        election,
        error.toString());
    sightings.forget(election);
    fire();
  }

  @Override
  public void onCompleted() {
    // jetcd ends a watch for good on some errors (no leader, cancelled); ours only end on close().
    synchronized (this) {
      if (closed) {
        return;
      }
      watcher = null;
    }
    sightings.forget(election);
    CompletableFuture.delayedExecutor(
            RESUME_DELAY.toMillis(), TimeUnit.MILLISECONDS, ON_TIMER_THREAD)
        .execute(this::restart);
  }

  private void restart() {
    try {
      // A restart from now (after compaction) tells the follower once etcd confirms it, which
      // covers the changes between the break and now that are not replayed.
      start();
    } catch (RuntimeException e) {
      // The client was closed under us: nothing left to watch with.
      log.debug("Cannot watch election '{}' again: {}", election, e.toString());
    }
  }

  private void fire() {
    try {
      changed.run();
    } catch (RuntimeException e) {
      log.warn("Watch callback of election '{}' threw; the watch goes on", election, e);
    }
  }

  @Override
  public void close() {
    Watch.Watcher current;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      current = watcher;
      watcher = null;
    }
    if (current != null) {
      current.close();
    }
    sightings.forget(election);
    onClose.accept(this);
  }
}
