package dev.baton.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;

/**
 * Reads of election and lease nodes that follow a {@code sync}, each waited for no longer than the
 * call's deadline.
 *
 * <p>ZooKeeper reads are only sequentially consistent per client: without the sync, the member we
 * talk to could still show a lease that another client's release or an expiry removed, or, cut off
 * from the quorum, confirm a lease the quorum has expired. The sync makes it catch up with the
 * quorum leader before it answers the reads. The sync and the reads go out together and are
 * answered in order on the session's one connection: one round trip.
 */
final class SyncedReads {

  /**
   * Reads per read-only {@code multi} in {@link #leaseNodes}. Each read answers about 80 bytes plus
   * the holder's id, so an answer stays far below ZooKeeper's default packet limit ({@code
   * jute.maxbuffer}, 1 MB) for ids up to a few kilobytes.
   */
  static final int READS_PER_MULTI = 250;

  private SyncedReads() {}

  /** The lease node and the election node, in this order, as one read-only {@code multi}. */
  static List<OpResult> election(ZooKeeper zk, ElectionNodes nodes, long deadline, Duration callTimeout) throws KeeperException {
    AtomicInteger syncCode = sync(zk, nodes.rawElectionPath());
    List<Op> reads = List.of(Op.getData(nodes.rawLeasePath()), Op.getData(nodes.rawElectionPath()));
    return send(zk, reads, syncCode, nodes.electionPath()).await(deadline, callTimeout, nodes.election(), "read");
  }

  /** The lease node; null when there is none. */
  static NodeRead leaseNode(ZooKeeper zk, ElectionNodes nodes, long deadline, Duration callTimeout, String what)
      throws KeeperException {
    AtomicInteger syncCode = sync(zk, nodes.rawLeasePath());
    OpResult read = getData(zk, nodes, syncCode).await(deadline, callTimeout, nodes.election(), what);
    return NodeRead.of(read, nodes.leasePath());
  }

  /**
   * The lease nodes of many elections after one sync, in read-only {@code multi}s of at most
   * {@value #READS_PER_MULTI} reads that all go out at once: one round trip for the lot. Each
   * result is a {@link OpResult.GetDataResult} or an {@link OpResult.ErrorResult} of its own
   * (NONODE when the node is gone); one read failing does not fail the others.
   *
   * @param election the election that a failure of the whole call concerns; null when it concerns many
   * @throws KeeperException when the sync or a {@code multi} as a whole failed (the connection or
   *     the session): the reads of the others would have failed alike
   */
  static List<OpResult> leaseNodes(
      ZooKeeper zk, List<ElectionNodes> nodes, long deadline, Duration callTimeout, String election, String what)
      throws KeeperException {
    AtomicInteger syncCode = sync(zk, nodes.get(0).rawLeasePath());
    if (nodes.size() == 1) {
      // The same answer without a multi's framing, some 20 bytes each way on every lone renewal.
      return List.of(getData(zk, nodes.get(0), syncCode).await(deadline, callTimeout, election, what));
    }
    List<Reply<List<OpResult>>> replies = new ArrayList<>(nodes.size() / READS_PER_MULTI + 1);
    for (int from = 0; from < nodes.size(); from += READS_PER_MULTI) {
      List<ElectionNodes> chunk = nodes.subList(from, Math.min(nodes.size(), from + READS_PER_MULTI));
      List<Op> reads = new ArrayList<>(chunk.size());
      for (ElectionNodes n : chunk) {
        reads.add(Op.getData(n.rawLeasePath()));
      }
      replies.add(send(zk, reads, syncCode, chunk.get(0).leasePath()));
    }
    List<OpResult> results = new ArrayList<>(nodes.size());
    for (Reply<List<OpResult>> reply : replies) {
      results.addAll(reply.await(deadline, callTimeout, election, what));
    }
    return results;
  }

  private static AtomicInteger sync(ZooKeeper zk, String rawPath) {
    AtomicInteger syncCode = new AtomicInteger();
    zk.sync(rawPath, (rc, path, ctx) -> syncCode.set(rc), null);
    return syncCode;
  }

  /** One read of a lease node, answered after the sync that went out before it, as a multi would answer it. */
  private static Reply<OpResult> getData(ZooKeeper zk, ElectionNodes nodes, AtomicInteger syncCode) {
    Reply<OpResult> reply = new Reply<>();
    zk.getData(
        nodes.rawLeasePath(),
        false,
        (rc, path, ctx, data, stat) -> {
          if (syncCode.get() != Code.OK.intValue()) {
            reply.fail(syncCode.get(), nodes.leasePath());
          } else if (rc == Code.OK.intValue()) {
            reply.answer(new OpResult.GetDataResult(data, stat));
          } else if (rc == Code.NONODE.intValue()) {
            reply.answer(new OpResult.ErrorResult(rc));
          } else {
            reply.fail(rc, nodes.leasePath());
          }
        },
        null);
    return reply;
  }

  /** A read-only {@code multi} answered after the sync that went out before it. */
  private static Reply<List<OpResult>> send(ZooKeeper zk, List<Op> reads, AtomicInteger syncCode, String pathForErrors) {
    Reply<List<OpResult>> reply = new Reply<>();
    zk.multi(
        reads,
        (rc, path, ctx, results) -> {
          if (syncCode.get() != Code.OK.intValue()) {
            reply.fail(syncCode.get(), pathForErrors);
          } else if (results == null) {
            reply.fail(rc, pathForErrors);
          } else {
            reply.answer(results);
          }
        },
        null);
    return reply;
  }
}
