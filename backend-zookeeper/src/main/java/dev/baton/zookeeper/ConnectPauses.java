package dev.baton.zookeeper;

import dev.baton.election.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cuts short the ZooKeeper client's pause between two connection attempts of a handle that replaces
 * an expired session, when a call waits for that handle's session.
 *
 * <p>Once Curator has given a session up (it expired, or the link was down for the session timeout)
 * it opens a new handle, whose first attempt is at once; every attempt after a failed one comes one
 * to two seconds later (a second for having tried every host, up to one more at random), however
 * soon the servers can be reached again, and the client tells nobody that an attempt of a handle
 * that never connected failed. A call made right after a link came back would wait out that pause,
 * longer than a call timeout of two seconds or less, and fail with no session although one was a
 * round trip away. A handle that never had a session holds nothing (no ephemeral node, no watch at
 * a server), so giving it up costs nothing: its expiry is injected, as Curator's own {@code
 * ConnectionStateManager} does for a connection suspended past the session timeout, and Curator
 * opens a new handle, which tries at once. A handle that has a session is never touched, nor the
 * client's first handle, which replaces nothing.
 *
 * <p>A replacement handle still without a session half a call timeout (at least 250 ms) after the
 * store learned of it (from Curator's LOST, or a call that found it) has failed its first attempt
 * (one that reaches a server takes a few round trips), and is given up only while a call waits for
 * it; at most once per that half call timeout for the store, so that calls that keep coming while
 * the servers stay out of reach add at most two attempts a call timeout to the client's own.
 */
final class ConnectPauses implements ConnectionStateListener {

  private static final Logger log = LoggerFactory.getLogger(ConnectPauses.class);

  /**
   * However short the call timeout, a handle is given up at most four times a second: each leaves
   * its client's two threads behind for up to the pause it was in.
   */
  private static final Duration MIN_GRACE = Duration.ofMillis(250);

  private final CuratorFramework client;
  private final MonotonicClock clock;
  private final long grace;

  /** The handle last seen without a session, and since when the store knows of it. */
  private record Sessionless(ZooKeeper zk, long sinceNanos) {}

  private final AtomicReference<Sessionless> seen = new AtomicReference<>();
  private final AtomicReference<Long> lastCut = new AtomicReference<>();

  ConnectPauses(CuratorFramework client, MonotonicClock clock, Duration callTimeout) {
    this.client = client;
    this.clock = clock;
    this.grace = Math.max(callTimeout.toNanos() / 2, MIN_GRACE.toNanos());
    client.getConnectionStateListenable().addListener(this);
  }

  @Override
  public void stateChanged(CuratorFramework c, ConnectionState newState) {
    if (newState == ConnectionState.LOST) {
      // Curator opened the replacement before it posted LOST: counted from a moment later.
      ZooKeeper zk = current();
      if (zk != null && zk.getSessionTimeout() <= 0) {
        // A call may have found it first, while this listener waited its turn: keep that moment.
        long now = clock.nanoTime();
        seen.updateAndGet(
            known -> known != null && known.zk() == zk ? known : new Sessionless(zk, now));
      }
    }
  }

  /**
   * Gives {@code zk} up if it is a replacement handle that has had its first attempt and still has
   * no session, so that Curator opens one that tries at once. Does nothing otherwise.
   */
  void cutShort(ZooKeeper zk, String election) {
    if (zk.getSessionTimeout() > 0
        || client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs() <= 0) {
      return;
    }
    long now = clock.nanoTime();
    Sessionless known = seen.get();
    if (known == null || known.zk() != zk) {
      seen.compareAndSet(known, new Sessionless(zk, now)); // opened unseen: counted from now
      return;
    }
    Long last = lastCut.get();
    if (now - known.sinceNanos() < grace
        || (last != null && now - last < grace)
        || !lastCut.compareAndSet(last, now)) {
      return; // still in its first attempt, cut just now, or another call cuts it
    }
    log.debug(
        "election '{}': the ZooKeeper client has no new session yet and pauses between attempts;"
            + " opening a new handle, which tries at once",
        election);
    zk.getTestable().injectSessionExpiration();
  }

  void close() {
    client.getConnectionStateListenable().removeListener(this);
  }

  private ZooKeeper current() {
    try {
      return client.getZookeeperClient().getZooKeeper();
    } catch (Exception e) {
      // Curator hands a failure of its own background work to whoever asks next for the handle.
      log.warn("the ZooKeeper client reported a failure", e);
      return null;
    }
  }
}
