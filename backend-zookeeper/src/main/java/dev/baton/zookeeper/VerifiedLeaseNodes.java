package dev.baton.zookeeper;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * Lease nodes a renewal read and found to be the one granted, each with a one-shot data watch that
 * the same read set and that has not fired since: while it has not, the node is still that node,
 * and a renewal needs only a {@code sync} (see the package documentation).
 *
 * <p>ZooKeeper sends a session its watch events in order with its replies, and the client runs
 * watchers and callbacks on its one event thread in that order. So when the answer to a {@code
 * sync} has arrived, every change to a watched node that the server applied before the {@code sync}
 * has already removed the node from here. Any event without a path (the connection was lost or came
 * back, the session expired) forgets every node: whatever happened meanwhile, the next renewal
 * reads again.
 */
final class VerifiedLeaseNodes implements Watcher {

  /** Raw node path to the {@code mzxid} of the node the read found there: its term's token. */
  private final ConcurrentHashMap<String, Long> unchanged = new ConcurrentHashMap<>();

  /**
   * Counts every change to {@link #unchanged}, after it is made. A renewal that finds it the same
   * after its {@code sync} as before its first look knows that every answer {@link
   * #unchangedSinceRead} gave it still holds, without asking again for each of thousands of nodes.
   */
  private final AtomicLong changes = new AtomicLong();

  /** Called by the read that set this watcher on the node, on the client's event thread. */
  void read(String rawNodePath, long mzxid) {
    unchanged.put(rawNodePath, mzxid);
    changes.incrementAndGet();
  }

  /** How many changes there have been; read it before the looks it is to vouch for. */
  long changes() {
    return changes.get();
  }

  /** Whether the node was read with this watcher at {@code mzxid} and not seen to change since. */
  boolean unchangedSinceRead(String rawNodePath, long mzxid) {
    Long read = unchanged.get(rawNodePath);
    return read != null && read == mzxid;
  }

  @Override
  public void process(WatchedEvent event) {
    if (event.getType() == Event.EventType.None || event.getPath() == null) {
      unchanged.clear();
    } else {
      unchanged.remove(event.getPath());
    }
    changes.incrementAndGet();
  }

  /** How many nodes are known unchanged now; for tests. */
  int size() {
    return unchanged.size();
  }
}
