package dev.baton.consul;

import dev.baton.election.Subscription;
import java.math.BigInteger;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.kiwiproject.consul.KeyValueClient;
import org.kiwiproject.consul.model.ConsulResponse;
import org.kiwiproject.consul.option.QueryOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one election key with Consul blocking queries: {@code GET /v1/kv/<key>?index=N&wait=..}
 * returns as soon as the key's index passes N, so a release, a takeover and a session invalidation
 * (which unlocks the key: {@code Behavior=release}) reach followers within a round trip. One thread
 * per watch, which spends its time waiting on the socket.
 *
 * <p>The query asks for the key as a prefix ({@code ?recurse}): on a key that was never written a
 * plain query answers 404, and the client then drops the index a blocking query needs. Keys that
 * merely begin with this one wake the watch spuriously, which {@link
 * dev.baton.election.LeaseStore#watch} allows.
 */
final class ElectionWatch implements Subscription {

  private static final Logger log = LoggerFactory.getLogger(ElectionWatch.class);

  /** How long one blocking query waits when nothing changes. */
  static final int WAIT_SECONDS = 20;

  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

  private final KeyValueClient kv;
  private final String election;
  private final String key;
  private final Runnable changed;
  private final Consumer<ElectionWatch> onClose;
  private final Duration firstBackoff;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final Thread thread;

  ElectionWatch(
      KeyValueClient kv,
      String election,
      String key,
      Runnable changed,
      Consumer<ElectionWatch> onClose,
      Duration firstBackoff) {
    this.kv = kv;
    this.election = election;
    this.key = key;
    this.changed = changed;
    this.onClose = onClose;
    this.firstBackoff = firstBackoff;
    this.thread = new Thread(this::run, "baton-consul-watch-" + election);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  private void run() {
    BigInteger index = BigInteger.ZERO;
    // The first answer tells the follower to look once: the watch is live only from then on, and a
    // change before it would otherwise go unreported. So does the first answer after a failure.
    boolean report = true;
    Duration backoff = firstBackoff;
    while (closed.getCount() > 0) {
      try {
        ConsulResponse<?> response =
            kv.getConsulResponseWithValues(
                key, QueryOptions.blockSeconds(WAIT_SECONDS, index).build());
        BigInteger next = response.getIndex();
        if (next == null) {
          next = BigInteger.ZERO;
        }
        if (report || !next.equals(index)) {
          notifyChanged();
        }
        // Consul's rules for blocking queries: an index that went backwards (a server restored
        // from a snapshot, a new cluster) starts over from 0, and an index below 1 is never waited
        // on, or the query would return at once every time.
        index = next.compareTo(index) < 0 ? BigInteger.ZERO : next.max(BigInteger.ONE);
        report = false;
        backoff = firstBackoff;
      } catch (RuntimeException e) {
        if (closed.getCount() == 0) {
          return;
        }
        log.debug(
            "Watch of election '{}' broke, telling the follower and trying again in {} ms: {}",
            election,
            backoff.toMillis(),
            Calls.describe(e));
        // What the follower saw may be out of date, and a change may go unseen until the watch is
        // back: the follower looks for itself now (and so finds out if the store is unreachable).
        notifyChanged();
        report = true;
        try {
          if (closed.await(backoff.toMillis(), TimeUnit.MILLISECONDS)) {
            return;
          }
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
        Duration doubled = backoff.multipliedBy(2);
        backoff = doubled.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : doubled;
      }
    }
  }

  private void notifyChanged() {
    try {
      changed.run();
    } catch (RuntimeException e) {
      log.warn("The change callback of election '{}' failed", election, e);
    }
  }

  @Override
  public void close() {
    if (closed.getCount() == 0) {
      return;
    }
    closed.countDown();
    // No interrupt: the blocking query in flight ends by itself within WAIT_SECONDS and its answer
    // is dropped. An interrupted call fails inside the client's failover, which then marks every
    // server failed in turn, and with several servers the whole client refused every call for a
    // while after a watch was closed (ConsulClusterConformanceIT, s12).
    onClose.accept(this);
  }
}
