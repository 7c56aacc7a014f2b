package dev.baton.zookeeper;

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

  private FreshReads() {}

  /**
   * The lease node and the election node, in this order, as one read-only {@code multi}, right
   * after a write of this session that was answered already: it shows the election at least as it
   * was at that write.
   */
  static List<OpResult> electionAfterOwnWrite(
      ZooKeeper zk, ElectionNodes nodes, CallDeadline deadline) throws KeeperException {
    AtomicInteger noBarrier = new AtomicInteger(Code.OK.intValue());
    List<Op> reads = List.of(Op.getData(nodes.rawLeasePath()), Op.getData(nodes.rawElectionPath()));
    return send(zk, reads, noBarrier, nodes.electionPath())
        .await(deadline, nodes.election(), "read");
  }

  /**
   * The lease node, null when there is none, as new as every write acknowledged to anyone before
   * this call: the read follows a write that changes nothing (a {@code multi} that only checks the
   * election node exists; when it does not, the refused check is a write all the same).
   */
  static NodeRead leaseNodeAfterAllWrites(
      ZooKeeper zk, ElectionNodes nodes, CallDeadline deadline, String what)
      throws KeeperException {
    AtomicInteger barrierCode = new AtomicInteger();
    zk.multi(
        List.of(Op.check(nodes.rawElectionPath(), -1)),
        (rc, path, ctx, results) ->
            barrierCode.set(rc == Code.NONODE.intValue() ? Code.OK.intValue() : rc),
        null);
    OpResult read = getData(zk, nodes, barrierCode).await(deadline, nodes.election(), what);
    return NodeRead.of(read, nodes.leasePath());
  }

  /**
   * A {@code sync}, whose answer says that the session was alive and its server followed the quorum
   * when the server took it, and that every change to a node this session watches, applied by the
   * server before that, has been delivered to the watcher (see {@link VerifiedLeaseNodes}). Its
   * path is the root: the server neither checks nor needs the path, and a short one keeps the
   * request almost as small as the client's own ping.
   */
  static Reply<Void> sync(ZooKeeper zk) {
    Reply<Void> reply = new Reply<>();
    zk.sync(
        "/",
        (rc, path, ctx) -> {
          if (rc == Code.OK.intValue()) {
            reply.answer(null);
          } else {
            reply.fail(rc, path);
          }
        },
        null);
    return reply;
  }

  /**
   * The lease node, read after the requests that went out before it (a {@link #sync}), with {@code
   * watcher} set on it as a one-shot data watch and told what the read found before any event of
   * that watch can reach it. A node that is gone sets no watch.
   */
  static Reply<OpResult> watchedLeaseNode(
      ZooKeeper zk, ElectionNodes nodes, VerifiedLeaseNodes watcher) {
    Reply<OpResult> reply = new Reply<>();
    zk.getData(
        nodes.rawLeasePath(),
        watcher,
        (rc, path, ctx, data, stat) -> {
          if (rc == Code.OK.intValue()) {
            watcher.read(nodes.rawLeasePath(), stat.getCzxid());
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

  /**
   * One read of a lease node, answered after the request that went out before it, as a multi would
   * answer it.
   */
  private static Reply<OpResult> getData(
      ZooKeeper zk, ElectionNodes nodes, AtomicInteger barrierCode) {
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
  private static Reply<List<OpResult>> send(
      ZooKeeper zk, List<Op> reads, AtomicInteger barrierCode, String pathForErrors) {
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
