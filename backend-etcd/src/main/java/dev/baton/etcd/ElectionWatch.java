package dev.baton.etcd;

import dev.baton.election.Subscription;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one election key and tells the follower when it changed (PUT or DELETE, which includes
 * expiry). When the watch breaks, it tells the follower once, since events may have been missed,
 * and watches again from the revision after the last one it saw.
 */
final class ElectionWatch implements Watch.Listener, Subscription {

  private static final Logger log = LoggerFactory.getLogger(ElectionWatch.class);
  private static final long RESTART_DELAY_MILLIS = 500;

  private final Watch watchClient;
  private final String election;
  private final ByteSequence key;
  private final Runnable changed;
  private final Consumer<ElectionWatch> onClose;

  private boolean closed;
  private Watch.Watcher watcher;
  /** The revision to resume from; 0 means "from now". */
  private long nextRevision;

  ElectionWatch(Watch watchClient, String election, ByteSequence key, Runnable changed, Consumer<ElectionWatch> onClose) {
    this.watchClient = watchClient;
    this.election = election;
    this.key = key;
    this.changed = changed;
    this.onClose = onClose;
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
    }
    watcher = watchClient.watch(key, option.build(), this);
  }

  @Override
  public void onNext(WatchResponse response) {
    synchronized (this) {
      if (closed) {
        return;
      }
      long revision = response.getHeader().getRevision();
      if (revision + 1 > nextRevision) {
        nextRevision = revision + 1;
      }
    }
    if (!response.getEvents().isEmpty()) {
      fire();
    }
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
    }
    log.debug("Watch of election '{}' broke, telling the follower and watching again: {}", election, error.toString());
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
    CompletableFuture.delayedExecutor(RESTART_DELAY_MILLIS, TimeUnit.MILLISECONDS).execute(this::restart);
  }

  private void restart() {
    boolean fromNow;
    synchronized (this) {
      fromNow = nextRevision == 0;
    }
    try {
      start();
    } catch (RuntimeException e) {
      // The client was closed under us: nothing left to watch with.
      log.debug("Cannot watch election '{}' again: {}", election, e.toString());
      return;
    }
    if (fromNow) {
      // Changes between the break and now were not replayed.
      fire();
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
    onClose.accept(this);
  }
}
