package dev.baton.zookeeper;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;

/**
 * Reads of election and lease nodes that are at least as new as a given write, each waited for no
 * longer than the call's deadline.
 *
 * <p>A ZooKeeper member answers reads from its own copy of the tree, and a session's requests are
 * answered in the order they were sent, so a read sees the session's own earlier writes. Writes of
 * other clients are another matter. A {@code sync} before the read makes a follower catch up with
 * the quorum leader first, but not the quorum leader itself: it sends a commit to the followers
 * before applying it, so a follower can acknowledge a write (a release, say) to one client while
 * the leader still answers another client's synced read from the tree without it. Where a stale
 * answer would be wrong, not just late, the read follows a write of this session instead: one that
 * changes nothing when none is wanted. Each read goes out together with what it follows, and is
 * answered in order on the session's one connection: one round trip.
 */
final class FreshReads {

  /**
   * Reads per read-only {@code multi} in {@link #leaseNodes}. Each read answers about 80 bytes plus
   * the holder's id, so an answer stays far below ZooKeeper's default packet limit ({@code
   * jute.maxbuffer}, 1 MB) for ids up to a few kilobytes.
   */
  static final int READS_PER_MULTI = 250;

  private FreshReads() {}

  /**
   * The lease node and the election node, in this order, as one read-only {@code multi}, right
   * after a write of this session that was answered already: it shows the election at least as it
   * was at that write.
   */
  static List<OpResult> electionAfterOwnWrite(ZooKeeper zk, ElectionNodes nodes, CallDeadline deadline)
      throws KeeperException {
    AtomicInteger noBarrier = new AtomicInteger(Code.OK.intValue());
    List<Op> reads = List.of(Op.getData(nodes.rawLeasePath()), Op.getData(nodes.rawElectionPath()));
    return send(zk, reads, noBarrier, nodes.electionPath()).await(deadline, nodes.election(), "read");
  }

  /**
   * The lease node, null when there is none, as new as every write acknowledged to anyone before
   * this call: the read follows a write that changes nothing (a {@code multi} that only checks the
   * election node exists; when it does not, the refused check is a write all the same).
   */
  static NodeRead leaseNodeAfterAllWrites(ZooKeeper zk, ElectionNodes nodes, CallDeadline deadline, String what)
      throws KeeperException {
    AtomicInteger barrierCode = new AtomicInteger();
    zk.multi(
        List.of(Op.check(nodes.rawElectionPath(), -1)),
        (rc, path, ctx, results) -> barrierCode.set(rc == Code.NONODE.intValue() ? Code.OK.intValue() : rc),
        null);
    OpResult read = getData(zk, nodes, barrierCode).await(deadline, nodes.election(), what);
    return NodeRead.of(read, nodes.leasePath());
  }

  /**
   * The lease nodes of many elections after one sync, in read-only {@code multi}s of at most
   * {@value #READS_PER_MULTI} reads that all go out at once: one round trip for the lot. Each
   * result is a {@link OpResult.GetDataResult} or an {@link OpResult.ErrorResult} of its own
   * (NONODE when the node is gone); one read failing does not fail the others.
   *
   * <p>A sync is enough to renew one's own leases: only this session's own writes remove its lease
   * nodes, and so does the end of the session, after which the members refuse its requests. The
   * sync makes sure the member still follows the quorum, so a member cut off from it cannot
   * confirm a lease the quorum has expired.
   *
   * @param election the election that a failure of the whole call concerns; null when it concerns many
   * @throws KeeperException when the sync or a {@code multi} as a whole failed (the connection or
   *     the session): the reads of the others would have failed alike
   */
  static List<OpResult> leaseNodes(
      ZooKeeper zk, List<ElectionNodes> nodes, CallDeadline deadline, String election, String what)
      throws KeeperException {
    AtomicInteger barrierCode = sync(zk, nodes.get(0).rawLeasePath());
    if (nodes.size() == 1) {
      // The same answer without a multi's framing, some 20 bytes each way on every lone renewal.
      return List.of(getData(zk, nodes.get(0), barrierCode).await(deadline, election, what));
    }
    List<Reply<List<OpResult>>> replies = new ArrayList<>(nodes.size() / READS_PER_MULTI + 1);
    for (int from = 0; from < nodes.size(); from += READS_PER_MULTI) {
      List<ElectionNodes> chunk = nodes.subList(from, Math.min(nodes.size(), from + READS_PER_MULTI));
      List<Op> reads = new ArrayList<>(chunk.size());
      for (ElectionNodes n : chunk) {
        reads.add(Op.getData(n.rawLeasePath()));
      }
      replies.add(send(zk, reads, barrierCode, chunk.get(0).leasePath()));
    }
    List<OpResult> results = new ArrayList<>(nodes.size());
    for (Reply<List<OpResult>> reply : replies) {
      results.addAll(reply.await(deadline, election, what));
    }
    return results;
  }

  private static AtomicInteger sync(ZooKeeper zk, String rawPath) {
    AtomicInteger barrierCode = new AtomicInteger();
    zk.sync(rawPath, (rc, path, ctx) -> barrierCode.set(rc), null);
    return barrierCode;
  }

  /** One read of a lease node, answered after the request that went out before it, as a multi would answer it. */
  private static Reply<OpResult> getData(ZooKeeper zk, ElectionNodes nodes, AtomicInteger barrierCode) {
    Reply<OpResult> reply = new Reply<>();
    zk.getData(
        nodes.rawLeasePath(),
        false,
        (rc, path, ctx, data, stat) -> {
          if (barrierCode.get() != Code.OK.intValue()) {
            reply.fail(barrierCode.get(), nodes.leasePath());
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

  /** A read-only {@code multi} answered after the request that went out before it. */
  private static Reply<List<OpResult>> send(ZooKeeper zk, List<Op> reads, AtomicInteger barrierCode, String pathForErrors) {
    Reply<List<OpResult>> reply = new Reply<>();
    zk.multi(
        reads,
        (rc, path, ctx, results) -> {
          if (barrierCode.get() != Code.OK.intValue()) {
            reply.fail(barrierCode.get(), pathForErrors);
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
