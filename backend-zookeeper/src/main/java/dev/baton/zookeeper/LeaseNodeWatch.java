package dev.baton.zookeeper;

import dev.baton.election.Lease;
import dev.baton.election.Subscription;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A leader's watch of its own node ({@link ZooKeeperLeaseStore#watchLease}): a data watch set by an
 * {@code exists} on the lease's session, one round trip per term. The node is written only when a
 * term is granted, and renewals write nothing, so the watch fires only when the term is over: the
 * node deleted (a release behind its back, the store giving back a lease that went unrenewed, an
 * operator, the session's expiry) or written by a newer term. The session's expiry is also told to
 * every watcher of it as a state event. A disconnection is no loss: the client sets its watches
 * again when it reconnects within the session, and the renewals tell meanwhile.
 *
 * <p>Everything runs on the client's event thread, which {@code lost} must not block. A watch that
 * is closed stays registered with the server until the node changes, which at the latest is this
 * term's release; it is then ignored.
 */
final class LeaseNodeWatch implements Watcher, AsyncCallback.StatCallback, Subscription {

  private static final Logger log = LoggerFactory.getLogger(LeaseNodeWatch.class);

  private final String election;
  private final long token;
  private final Runnable lost;
  private volatile boolean closed;
  private boolean told;

  LeaseNodeWatch(Lease lease, Runnable lost) {
    this.election = lease.election();
    this.token = lease.token().value();
    this.lost = lost;
  }

  /** The answer to the {@code exists} that set the watch: is the node still this term's? */
  @Override
  public void processResult(int rc, String path, Object ctx, Stat stat) {
    if (rc == Code.OK.intValue()) {
      if (stat.getMzxid() != token) {
        gone("was written by a newer term");
      }
    } else if (rc == Code.NONODE.intValue()) {
      gone("is gone");
    } else if (rc == Code.SESSIONEXPIRED.intValue()) {
      gone("went with its expired session");
    } else {
      // Unanswered (the connection dropped, say): nothing is known, and the renewals will tell.
      log.debug("election '{}': cannot watch the lease node {}: {}", election, path, Code.get(rc));
    }
  }

  @Override
  public void process(WatchedEvent event) {
    switch (event.getType()) {
      case NodeDeleted -> gone("was deleted");
      case NodeDataChanged -> gone("was written by a newer term");
      case None -> {
        if (event.getState() == Event.KeeperState.Expired) {
          gone("went with its expired session");
        }
      }
      default -> {
        // A creation, or the removal of the watch: not this term's end.
      }
    }
  }

  void gone(String what) {
    if (closed) {
      return;
    }
    synchronized (this) {
      if (told) {
        return;
      }
      told = true;
    }
    log.debug("election '{}': the node of term {} {}", election, token, what);
    lost.run();
  }

  @Override
  public void close() {
    closed = true;
  }
}
