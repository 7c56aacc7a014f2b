/**
 * Leader election on ZooKeeper through Apache Curator: {@link
 * dev.baton.zookeeper.ZooKeeperLeaseStore} and its provider ({@code election.backend=zookeeper}).
 *
 * <h2>What a lease is</h2>
 *
 * Candidates wait in line under the persistent election node {@code <basePath>/<election>}: each
 * has an ephemeral sequential child {@code c-<sequence>} holding its candidate id, and the lowest
 * sequence holds the lease. Nodes only join at the end, so the first in line stays first until its
 * node goes; it goes when its holder releases, when its session ends (the ZooKeeper servers judge
 * expiry with their own clock), or when the store gives it back (below). A follower keeps its place
 * while its elector follows the election ({@link dev.baton.zookeeper.ZooKeeperLeaseStore#follow}),
 * so when the holder releases, the next in line is granted on a read: the release is the handover's
 * one write, where a fixed lease node would need the follower's own create after it. A {@code sync}
 * goes right ahead of that read, so that, as for a renewal, the answer shows the follower's session
 * alive at the quorum leader after the call began. The read needs no write before it to be fresh: a
 * member behind the quorum can only show nodes that have gone already, never hide one still in
 * line, so a stale read can refuse a follower that is first by now (its watch reports the change
 * once its server applies it), never grant one that is not.
 *
 * <p>The fencing token is the holder's node's {@code mzxid}. A grant on a read takes the node's own
 * zxid, above every earlier token as long as no grant has written since the node joined; a grant
 * that cannot be a read (a new term of the holder, which must have a new token, or the first grant
 * after such a term) sets the node's data and the election node's in one {@code multi}, so its
 * token is that write's zxid and the election node's {@code mzxid} remembers the highest written
 * token. A place once granted is never granted on a read again, even when a new term's write may
 * not have applied: its token would come round a second time. Release and {@link
 * dev.baton.zookeeper.ZooKeeperLeaseStore#guarded guarded writes} are conditional on the node's
 * data version of the term, which only a new term changes.
 *
 * <h2>SUSPENDED, LOST, RECONNECTED, and why the store ignores them for leadership</h2>
 *
 * Curator reports SUSPENDED when the client notices that its connection dropped, LOST when it gives
 * the session up, RECONNECTED when it is connected again. A leader must not measure its remaining
 * time from SUSPENDED: the client notices a silent server only after two thirds of the session
 * timeout without an answer (later still after a GC pause), while the server has been counting the
 * session down since it last heard from the client. Counting a session timeout from SUSPENDED is
 * how Curator's leader recipes produced two leaders at once (CURATOR-460): the server had expired
 * the session and granted a successor while the old leader believed it had time left.
 *
 * <p>Leadership safety comes instead from the Elector's renew deadline, measured from the start of
 * the last renewal that ZooKeeper answered. Every renewal is one round trip in the lease's own
 * session, and a successful answer means a server in contact with the quorum saw the session and
 * the node alive after the renewal started, so the session cannot expire, and no successor be
 * granted, until the session timeout after that start. The Elector steps down at its renew
 * deadline, which is shorter. The store never reports a renewal as confirmed unless that round trip
 * completed: while disconnected a call fails with {@link dev.baton.election.LeaseStoreException}
 * within the call timeout (the lease may or may not still be held), and a definite answer (node
 * gone, granted again, session expired or replaced) is a {@link
 * dev.baton.election.LeaseLostException}.
 *
 * <h2>A renewal is one {@code sync}: why that is as strict as a read</h2>
 *
 * The first renewal of a term sends a {@code sync} and, right behind it, a read of the holder's
 * node that also sets a one-shot data watch on it; the read confirms the node is the one granted
 * (its {@code mzxid} is the token). Every later renewal of the term sends the {@code sync} alone
 * (one for a whole batch of renewals), and is confirmed when its answer arrives and the watch has
 * not fired. What the two answers prove is the same:
 *
 * <ul>
 *   <li>The session is alive at the server: a {@code sync} of an expired session is refused with
 *       SESSIONEXPIRED (the lease is lost), and one that cannot get through fails the renewal
 *       within the call timeout, as a read would.
 *   <li>The server follows the quorum when it takes the {@code sync}: a {@code sync} goes through
 *       the quorum leader, so a member cut off from the quorum cannot confirm a lease the quorum
 *       has expired. This is what a bare ping (Curator's LeaderLatch relies on its session alone)
 *       does not prove: a follower answers pings until it notices it lost the quorum leader, while
 *       the leader may already have expired the session.
 *   <li>The node is still the one granted: ZooKeeper delivers a session's watch events in order
 *       with its replies, and the client runs watchers and callbacks in that order on one thread,
 *       so a delete of the node that the server applied before the {@code sync} has fired the watch
 *       before the {@code sync}'s answer is seen; the renewal then reads the node again, and finds
 *       it gone or granted again. A lost connection, a reconnect or an expired session (any event
 *       without a path) forgets every watched node, and the next renewal of each reads again:
 *       ZooKeeper replays missed watch events on a reconnect, but the store does not rely on that.
 * </ul>
 *
 * The renewal starts its clock before it sends anything, exactly as before, so the renew deadline
 * and the lease's TTL are counted from the same moment. On the wire a {@code sync} of the root is
 * 17 bytes against a ping's 12. The ZooKeeper client pings a connection that has sent nothing for
 * about a third of the session timeout, and any request resets that count, so the store asks the
 * elector for renewals just before each ping would be due ({@link
 * dev.baton.zookeeper.ZooKeeperLeaseStore#renewalPeriod}): a leader then sends one {@code sync}
 * where Curator's leader sends one ping, instead of both.
 *
 * <p>After RECONNECTED in the same session the holder's node is still there, and the next renewal
 * confirms it with the same token, if that happens before the renew deadline. After LOST, Curator
 * opens a new session; the old node belongs to the old session, so renewals report the lease lost
 * and the candidate campaigns again. Its campaign deletes its node of the old session (Curator may
 * give a session up before the servers do, and the node would keep the line waiting until they
 * expire it), and the deletion fires the followers' watches. Watches are registered again after
 * every reconnect, and their callbacks run then, because ZooKeeper does not replay events a
 * disconnected client missed; they also run on SUSPENDED and LOST, so that followers poll while
 * their watches are blind.
 *
 * <h2>A stuck holder, or a stuck follower first in line, in a live session</h2>
 *
 * The client's own thread keeps a session alive however long the elector above it is stuck (a
 * deadlock, a stalled executor), and an ephemeral node lives as long as its session. So the store
 * also gives a holder's node back when its holder has not renewed it for its TTL (measured from the
 * start of the last grant or renewal that confirmed it, on the holder's clock), as a lease in any
 * other store would run out; a renewal after that is told the lease is lost. The lease therefore
 * ends at whichever comes first: the TTL without a renewal, or the end of its session.
 *
 * <p>A follower first in line keeps the others out just as a holder does, whether it has taken the
 * lease or not. Its elector is told of every change to the line and tries at once (a follower third
 * in line or further back when it last read the line is told 10 ms late, so that a release brings
 * the servers one follower's read at once, the next in line's, not everyone's), so the store gives
 * a follower's place back when its candidate has not tried for a TTL after such a change; granting
 * and giving back exclude each other in the store, so a place is never given back once granted. The
 * candidate's next try takes a new place at the end of the line.
 *
 * <h2>What is not guaranteed</h2>
 *
 * A leader can still act after its lease ended if it was paused between checking its term and
 * acting. Pass the fencing token with writes to other systems, and make writes to ZooKeeper itself
 * conditional on the lease with {@link dev.baton.zookeeper.ZooKeeperLeaseStore#guarded}. Exclusion
 * also assumes the clocks of client and servers run at about the same rate and the renew deadline
 * leaves a margin below the session timeout.
 */
package dev.baton.zookeeper;
