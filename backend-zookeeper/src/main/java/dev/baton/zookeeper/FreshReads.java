package dev.baton.zookeeper;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;

/**
 * Reads of election and candidate nodes that are at least as new as a given write, each waited for
 * no longer than the call's deadline.
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
   * The line as one read-only {@code multi}: the election node's children and data, and then, when
   * {@code own} is not null, that node of the election too. Sent at once and answered after the
   * requests that went out before it.
   */
  static Reply<List<OpResult>> line(ZooKeeper zk, ElectionNodes nodes, String own) {
    List<Op> reads =
        own == null
            ? List.of(Op.getChildren(nodes.rawElectionPath()), Op.getData(nodes.rawElectionPath()))
            : List.of(
                Op.getChildren(nodes.rawElectionPath()),
                Op.getData(nodes.rawElectionPath()),
                Op.getData(nodes.rawChild(own)));
    return send(zk, reads, new AtomicInteger(Code.OK.intValue()), nodes.electionPath());
  }

  /**
   * The line, as new as every write acknowledged to anyone before this call: the read follows a
   * write that changes nothing (a {@code multi} that only checks the election node exists; when it
   * does not, the refused check is a write all the same).
   */
  static Line lineAfterAllWrites(
      ZooKeeper zk, ElectionNodes nodes, CallDeadline deadline, String what)
      throws KeeperException {
    AtomicInteger barrierCode = new AtomicInteger();
    zk.multi(
        List.of(Op.check(nodes.rawElectionPath(), -1)),
        (rc, path, ctx, results) ->
            barrierCode.set(rc == Code.NONODE.intValue() ? Code.OK.intValue() : rc),
        null);
    List<Op> reads =
        List.of(Op.getChildren(nodes.rawElectionPath()), Op.getData(nodes.rawElectionPath()));
    return Line.of(
        send(zk, reads, barrierCode, nodes.electionPath()).await(deadline, nodes.election(), what),
        nodes);
  }

  /** One candidate's node, null when it is gone. */
  static NodeRead node(
      ZooKeeper zk, ElectionNodes nodes, String name, CallDeadline deadline, String what)
      throws KeeperException {
    Reply<OpResult> reply = new Reply<>();
    zk.getData(
        nodes.rawChild(name),
        false,
        (rc, path, ctx, data, stat) -> {
          if (rc == Code.OK.intValue()) {
            reply.answer(new OpResult.GetDataResult(data, stat));
          } else if (rc == Code.NONODE.intValue()) {
            reply.answer(new OpResult.ErrorResult(rc));
          } else {
            reply.fail(rc, nodes.child(name));
          }
        },
        null);
    return NodeRead.of(reply.await(deadline, nodes.election(), what), nodes.child(name));
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
   * A candidate's node, read after the requests that went out before it (a {@link #sync}), with
   * {@code watcher} set on it as a one-shot data watch and told what the read found before any
   * event of that watch can reach it. A node that is gone sets no watch.
   */
  static Reply<OpResult> watchedNode(
      ZooKeeper zk, String rawPath, String path, VerifiedLeaseNodes watcher) {
    Reply<OpResult> reply = new Reply<>();
    zk.getData(
        rawPath,
        watcher,
        (rc, p, ctx, data, stat) -> {
          if (rc == Code.OK.intValue()) {
            watcher.read(rawPath, stat.getMzxid());
            reply.answer(new OpResult.GetDataResult(data, stat));
          } else if (rc == Code.NONODE.intValue()) {
            reply.answer(new OpResult.ErrorResult(rc));
          } else {
            reply.fail(rc, path);
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
