package dev.baton.etcd;

import dev.baton.election.Subscription;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A leader's watch of its own election key ({@link EtcdLeaseStore#watchLease}). The token is the
 * key's {@code mod_revision} and renewals only keep the etcd lease alive, so the key does not
 * change while the term lasts: any event on it after the grant means the term is over. A DELETE is
 * the etcd lease expiring or revoked (by a raft leader that stalled and came back, say) or an
 * operator; a PUT at another revision is a takeover. The watch starts at the revision after the
 * grant, so a change between the grant and the watch's registration is replayed, not missed; the
 * leader's own renewals write nothing and cost nothing here.
 *
 * <p>A watch that breaks is resumed from the revision after the last one seen; a break alone is
 * never reported as a loss. If etcd compacted that revision away, the watch resumes from now and a
 * change in between is left to the next renewal, which finds it as before.
 */
final class LeaseWatch implements Watch.Listener, Subscription {

  private static final Logger log = LoggerFactory.getLogger(LeaseWatch.class);

  /** As {@link ElectionWatch}: jetcd's pause before it resumes a watch. */
  private static final Duration RESUME_DELAY = Duration.ofMillis(500);

  private final Watch watchClient;
  private final String election;
  private final ByteSequence key;
  private final long token;
  private final Runnable lost;
  private final Consumer<LeaseWatch> onClose;

  private boolean closed;
  private boolean told;
  private Watch.Watcher watcher;

  /** The revision to resume from; 0 means "from now". */
  private long nextRevision;

  LeaseWatch(
      Watch watchClient,
      String election,
      ByteSequence key,
      long token,
      Runnable lost,
      Consumer<LeaseWatch> onClose) {
    this.watchClient = watchClient;
    this.election = election;
    this.key = key;
    this.token = token;
    this.lost = lost;
    this.onClose = onClose;
    this.nextRevision = token + 1;
  }

  synchronized void start() {
    if (closed) {
      return;
    }
    WatchOption.Builder option =
        WatchOption.builder()
            // A member cut off from its cluster cancels the watch instead of going silent.
            .withRequireLeader(true);
    if (nextRevision > 0) {
      option.withRevision(nextRevision);
    }
    watcher = watchClient.watch(key, option.build(), this);
  }

  @Override
  public void onNext(WatchResponse response) {
    boolean gone = false;
    synchronized (this) {
      if (closed) {
        return;
      }
      long revision = response.getHeader().getRevision();
      if (revision + 1 > nextRevision) {
        nextRevision = revision + 1;
      }
      for (WatchEvent event : response.getEvents()) {
        if (event.getEventType() == WatchEvent.EventType.DELETE
            || event.getKeyValue().getModRevision() != token) {
          gone = true;
        }
      }
      if (gone && !told) {
        told = true;
      } else {
        gone = false;
      }
    }
    if (gone) {
      log.debug("election '{}': the key of term {} was deleted or taken over", election, token);
      try {
        lost.run();
      } catch (RuntimeException e) {
        log.warn("election '{}': the lease loss callback threw", election, e);
      }
    }
  }

  @Override
  public void onError(Throwable error) {
    synchronized (this) {
      if (closed) {
        return;
      }
      if (String.valueOf(error.getMessage()).contains("compacted")) {
        nextRevision = 0;
      }
    }
    // jetcd resumes the watch itself (or ends it, and onCompleted starts it again).
    log.debug("Watch of the lease of election '{}' broke: {}", election, error.toString());
  }

  @Override
  public void onCompleted() {
    synchronized (this) {
      if (closed) {
        return;
      }
      watcher = null;
    }
    CompletableFuture.delayedExecutor(
            RESUME_DELAY.toMillis(), TimeUnit.MILLISECONDS, ElectionWatch.ON_TIMER_THREAD)
        .execute(this::restart);
  }

  private void restart() {
    try {
      start();
    } catch (RuntimeException e) {
      // The client was closed under us: the renewals will tell.
      log.debug("Cannot watch the lease of election '{}' again: {}", election, e.toString());
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
