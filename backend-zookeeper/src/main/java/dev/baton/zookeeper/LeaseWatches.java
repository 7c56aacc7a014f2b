package dev.baton.zookeeper;

import dev.baton.election.LeaseStoreException;
import dev.baton.election.Subscription;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Persistent ZooKeeper watches on election nodes, kept alive across reconnects and new sessions.
 *
 * <p>A persistent watch (ZooKeeper 3.6+) on the election node fires whenever a candidate joins or
 * leaves the line (the delete of an expired holder's ephemeral node included) and whenever a grant
 * writes the election node, without being re-armed. A leader's renewals write nothing, so they fire
 * nothing. It is tied to one session and the server does not replay events missed while the client
 * was disconnected, so on every reconnect each watch is registered again and its callback runs
 * once: the follower then looks for itself. The callback also runs when the connection is suspended
 * or lost: a follower that cannot be told of changes for a while must poll meanwhile.
 */
final class LeaseWatches implements ConnectionStateListener {

  private static final Logger log = LoggerFactory.getLogger(LeaseWatches.class);

  private final CuratorFramework client;
  private final Set<LeaseWatch> active = ConcurrentHashMap.newKeySet();

  LeaseWatches(CuratorFramework client) {
    this.client = client;
    client.getConnectionStateListenable().addListener(this);
  }

  /**
   * Runs a watcher's callback on the thread that delivers the change: a callback that throws is
   * logged, and the thread goes on delivering other changes.
   */
  static void tell(String election, Runnable changed) {
    try {
      changed.run();
    } catch (RuntimeException e) {
      log.warn("election '{}': watch callback failed", election, e);
    }
  }

  /**
   * Registers a watch and waits for the server to confirm it. A registration that fails for a
   * connection problem stays active and is registered at the next reconnect, which also calls
   * {@code changed}; any other failure is thrown.
   */
  Subscription watch(ElectionNodes nodes, Runnable changed, CallDeadline deadline) {
    LeaseWatch watch = new LeaseWatch(nodes, changed);
    active.add(watch);
    Reply<Void> reply = new Reply<>();
    try {
      watch.send(reply);
    } catch (Exception e) {
      watch.close();
      throw new LeaseStoreException(nodes.election(), "cannot watch " + nodes.electionPath(), e);
    }
    try {
      reply.await(deadline, nodes.election(), "watch " + nodes.electionPath());
    } catch (KeeperException e) {
      if (!isConnectionProblem(e.code())) {
        watch.close();
        throw new LeaseStoreException(
            nodes.election(), "cannot watch " + nodes.electionPath() + ": " + e.code(), e);
      }
    } catch (LeaseStoreException e) {
      // Timed out: the registration is still on its way, and confirms with a call to changed.
      log.debug(
          "election '{}': watch on {} not confirmed yet",
          nodes.election(),
          nodes.electionPath(),
          e);
    }
    return watch;
  }

  @Override
  public void stateChanged(CuratorFramework c, ConnectionState newState) {
    if (newState == ConnectionState.RECONNECTED) {
      for (LeaseWatch watch : active) {
        watch.reregister();
      }
    } else if (newState == ConnectionState.SUSPENDED || newState == ConnectionState.LOST) {
      // The watch is blind until the reconnect: its follower must look for itself, and keep
      // looking (its calls fail, so it polls) instead of waiting for an event that cannot come.
      for (LeaseWatch watch : active) {
        watch.notifyChanged();
      }
    }
  }

  void close() {
    client.getConnectionStateListenable().removeListener(this);
    for (LeaseWatch watch : active) {
      watch.close();
    }
  }

  static boolean isConnectionProblem(KeeperException.Code code) {
    switch (code) {
      case CONNECTIONLOSS:
      case OPERATIONTIMEOUT:
      case SESSIONEXPIRED:
      case SESSIONMOVED:
      case REQUESTTIMEOUT:
        return true;
      default:
        return false;
    }
  }

  private final class LeaseWatch implements Watcher, Subscription {

    private final ElectionNodes nodes;
    private final Runnable changed;
    private volatile boolean closed;

    LeaseWatch(ElectionNodes nodes, Runnable changed) {
      this.nodes = nodes;
      this.changed = changed;
    }

    /** Registers again after a reconnect; the confirmation calls {@code changed}. */
    void reregister() {
      try {
        send(null);
      } catch (Exception e) {
        log.warn("election '{}': could not watch {}", nodes.election(), nodes.electionPath(), e);
      }
    }

    /**
     * Adds the watch on the server. The confirmation goes to {@code first}, or, when that is null
     * (a reconnect) or its waiter gave up, to {@code changed}: events may have been missed.
     */
    void send(Reply<Void> first) throws Exception {
      if (closed) {
        return;
      }
      client
          .watchers()
          .add()
          .withMode(AddWatchMode.PERSISTENT)
          .inBackground(
              (c, event) -> {
                int rc = event.getResultCode();
                if (rc == KeeperException.Code.OK.intValue()) {
                  if (first == null || !first.answer(null)) {
                    notifyChanged();
                  }
                } else if (first == null || !first.fail(rc, nodes.electionPath())) {
                  // A connection problem brings a reconnect, which registers again.
                  log.warn(
                      "election '{}': could not watch {} ({}); trying again at the next reconnect",
                      nodes.election(),
                      nodes.electionPath(),
                      KeeperException.Code.get(rc));
                }
              })
          .usingWatcher(this)
          .forPath(nodes.electionPath());
    }

    @Override
    public void process(WatchedEvent event) {
      // Connection events (type None) are handled through the connection state listener.
      if (event.getType() != Event.EventType.None) {
        notifyChanged();
      }
    }

    private void notifyChanged() {
      if (!closed) {
        tell(nodes.election(), changed);
      }
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      active.remove(this);
      try {
        client.watchers().remove(this).quietly().inBackground().forPath(nodes.electionPath());
      } catch (Exception e) {
        // The client may be closed already; then the watch went with it.
        log.debug(
            "election '{}': could not remove the watch on {}",
            nodes.election(),
            nodes.electionPath(),
            e);
      }
    }
  }
}
