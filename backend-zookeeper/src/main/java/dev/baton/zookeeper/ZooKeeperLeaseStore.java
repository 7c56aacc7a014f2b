package dev.baton.zookeeper;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.election.Renewal;
import dev.baton.election.Subscription;
import dev.baton.zookeeper.Places.Place;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaseStore} on ZooKeeper: candidates wait in line as ephemeral sequential nodes, and the
 * first in line holds the lease, so it lives exactly as long as the ZooKeeper session that created
 * it, as judged by the ZooKeeper servers.
 *
 * <p>Each election has a persistent node {@code <basePath>/<election>}, and under it a node {@code
 * c-<sequence>} per candidate in line, holding its candidate id. A candidate that {@link #follow
 * follows} the election takes its place with its first {@code tryAcquire}: it creates its node and
 * reads the line right behind the create, one round trip, and first in line is a grant. One that
 * does not follow joins too in an election this store has never seen another candidate first in
 * line of, and leaves at once unless it is first; in any other, it reads the line first (behind a
 * write that changes nothing) and is refused without taking a place while anyone is in it. A
 * follower's later {@code tryAcquire} is a {@code sync} and a read of the line, one round trip:
 * once the holder released or its session ended, the follower is first and granted without a write.
 * The fencing token is the holder's node's {@code mzxid}; a new term, and the first grant after
 * one, write the node and the election node in one {@code multi} so that every token is above the
 * one before (see the package documentation). A term's first renewal reads the holder's node after
 * a {@code sync}, checks that it is still the one granted and watches it; later renewals are the
 * {@code sync} alone while the watch has not fired. Release and {@link #guarded guarded writes} are
 * conditional on the node's data version of the term.
 *
 * <p>Many elections, and many candidates, share one {@link CuratorFramework} and its session; a
 * node's data tells candidates of one session apart. The session timeout is the lease's TTL: the
 * {@code ttl} asked for in {@link #tryAcquire} cannot change it, and a {@code ttl} longer than the
 * session timeout is refused, since the lease would not last that long. {@link LeaseRecord}s of
 * other holders report this store's session timeout; their own may differ.
 *
 * <p>A lease also ends when its holder has not renewed it for its TTL while the session lives on (a
 * stuck elector), and a follower's place when its candidate has not tried for a TTL after the line
 * changed: the store then deletes the node itself, see the package documentation. A candidate's
 * node left by an earlier session of this store is deleted by its next {@code tryAcquire}, instead
 * of keeping the line waiting until the servers expire the old session.
 *
 * <p>Every call is a few round trips at most on the client's current ZooKeeper handle (a grant of a
 * free election one, or two where the store has seen another candidate first, a follower's grant
 * one, a refusal two, a new term two), all waited for no longer than the call timeout together.
 * Renewals and guarded writes are pinned to their lease's session on purpose: Curator would retry
 * an operation on a new session, where "this node is mine" no longer means what it did. A grant, a
 * read or a release belongs to no session, and one that finds its session expired (a client cut off
 * until then learns so only when it reconnects) goes on in the next session within its call
 * timeout. A call that waits for the session replacing an expired one does not wait out the
 * ZooKeeper client's pause of one to two seconds between connection attempts ({@link
 * ConnectPauses}).
 *
 * <p>Never call the store from a ZooKeeper callback thread (such as a {@link #watch} callback): its
 * answers arrive on that thread, so the call would wait out its timeout.
 */
public final class ZooKeeperLeaseStore implements LeaseStore {

  public static final String DEFAULT_BASE_PATH = "/baton/elections";
  public static final Duration DEFAULT_CALL_TIMEOUT = CallTimeout.DEFAULT;

  private static final int RENEW_BATCH_LIMIT = 1000;

  /**
   * Elections whose paths, and terms whose handles, are kept once made: a renewal of 10,000 leases
   * a second would otherwise build and check every path and parse every handle again. Bounded so
   * that elections named afresh for each job cannot grow them without end; past the bound they are
   * cleared and filled again.
   */
  private static final int CACHE_LIMIT = 100_000;

  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLeaseStore.class);

  /** How much sooner the next in line is told of a change than those behind it. */
  private static final Duration NEXT_IN_LINE_HEAD_START = Duration.ofMillis(10);

  private static final byte[] NO_DATA = new byte[0];

  /** How often a call waiting for a session looks at the client's handle itself. */
  private static final long SESSION_POLL_MILLIS = 50;

  private final CuratorFramework client;
  private final String basePath;
  private final Duration callTimeout;
  private final List<ACL> acl;
  private final boolean closesClient;
  private final MonotonicClock clock;
  private final LeaseWatches watches;
  private final UnrenewedLeases unrenewed;
  private final VerifiedLeaseNodes verified = new VerifiedLeaseNodes();
  private final ConnectPauses connectPauses;

  private final Places places;

  private final Map<String, ElectionNodes> nodesByElection = new ConcurrentHashMap<>();
  private final Map<String, LeaseHandle> handlesByText = new ConcurrentHashMap<>();

  /**
   * Elections this store has read another candidate first in line of: a candidate that does not
   * follow reads those first rather than join ({@link #acquireIn}), since they are contended. Any
   * other election is most likely free, and is joined at once, one round trip. Once in, an election
   * stays: pollers would otherwise join again after every release a read found, and race each
   * other's short-lived places again.
   */
  private final Set<String> seenInUse = ConcurrentHashMap.newKeySet();

  /**
   * Every session this store has made candidate nodes in: a node of a candidate's id left in line
   * by one of them, other than the current one, is this store's own dead leftover (the client has
   * left that session), and may go. A node of any other session is another live process's.
   */
  private final Set<Long> sessionsHad = ConcurrentHashMap.newKeySet();

  private volatile boolean closed;

  private ZooKeeperLeaseStore(Builder builder) {
    this.client = builder.client;
    this.basePath = builder.basePath;
    this.callTimeout = builder.callTimeout;
    this.acl = builder.acl;
    this.closesClient = builder.closesClient;
    this.clock = builder.clock;
    this.watches = new LeaseWatches(client);
    this.unrenewed = new UnrenewedLeases(client, callTimeout, clock);
    this.places = new Places(clock, this::leave);
    this.connectPauses = new ConnectPauses(client, clock, callTimeout);
  }

  /** A store on {@code client}, which the caller owns, starts and closes. */
  public static Builder builder(CuratorFramework client) {
    return new Builder(requireNonNull(client, "client"));
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    requireNonNull(election, "election");
    requireNonNull(candidate, "candidate");
    requireNonNull(ttl, "ttl");
    ElectionNodes nodes = nodes(election);
    CallDeadline deadline = deadline();
    // The candidate tries, even if the store cannot reach ZooKeeper now: its place is not stuck.
    places.attemptStarts(election, candidate);
    try {
      return inLiveSession(
          election, deadline, zk -> acquireIn(zk, nodes, candidate, ttl, deadline));
    } catch (KeeperException e) {
      throw failure(election, "tryAcquire for '" + candidate + "'", e);
    }
  }

  private Acquisition acquireIn(
      ZooKeeper zk, ElectionNodes nodes, String candidate, Duration ttl, CallDeadline deadline)
      throws KeeperException {
    String election = nodes.election();
    long started = deadline.atNanos() - callTimeout.toNanos();
    Duration sessionTtl = sessionTtl(zk);
    if (ttl.compareTo(sessionTtl) > 0) {
      throw new ConfigurationException(
          "election '"
              + election
              + "': a lease of "
              + ttl.toMillis()
              + "ms was asked for, but ZooKeeper negotiated a session timeout of "
              + sessionTtl.toMillis()
              + "ms, and a lease lasts only as long as its session; raise the session timeout "
              + "(election.zookeeper.session-timeout, or the CuratorFramework's sessionTimeoutMs) to at least the lease "
              + "duration (servers clamp it to [2, 20] x tickTime by default) or shorten election.lease-duration");
    }
    byte[] me = candidate.getBytes(UTF_8);
    String what = "tryAcquire for '" + candidate + "'";
    sessionsHad.add(zk.getSessionId());
    // Each pass ends in an answer, or finds the candidate's place gone (given back, or left with a
    // session) or the election node missing, and goes round once more. Only a line that keeps
    // changing under every pass keeps us here, until the call timeout.
    while (!deadline.passed()) {
      ensureOpen(election);
      Place place = places.attemptStarts(election, candidate);
      if (place != null && place.sessionId != zk.getSessionId()) {
        // Its node ends with the session the client has left; out of the line it goes now, so
        // that it does not keep the others out until the servers expire that session.
        places.forget(place);
        leave(place);
        place = null;
      }
      if (place == null
          && !places.isFollowed(election, candidate)
          && seenInUse.contains(election)) {
        // A candidate that does not follow would give up a place at once: while anyone is in
        // line, a read refuses it and it takes no place. Polling candidates then cannot keep each
        // other out with places about to go, and cost one transaction a try instead of a join and
        // a leave. That one is the barrier ahead of the read, which changes nothing: a read that
        // misses a release acknowledged to another client would refuse an election that is free.
        Line line = seen(election, FreshReads.lineAfterAllWrites(zk, nodes, deadline, what), null);
        if (line.first() != null) {
          LeaseRecord holder = holderOrOrphan(zk, nodes, line, me, deadline, what);
          if (holder != null) {
            return Acquisition.held(holder);
          }
          continue;
        }
      }
      if (place == null) {
        Joined joined = join(zk, nodes, me, deadline, what);
        if (joined == null) {
          continue; // the election node was missing, and is there now
        }
        seen(election, joined.line(), joined.node());
        if (joined.node() == null) {
          // Another candidate created the election just now and is first: a candidate that does
          // not follow is refused without a node of its own (one that follows takes its place).
          if (joined.line().first() != null && !places.isFollowed(election, candidate)) {
            LeaseRecord holder = holderOrOrphan(zk, nodes, joined.line(), me, deadline, what);
            if (holder != null) {
              return Acquisition.held(holder);
            }
          }
          continue;
        }
        place = new Place(nodes, candidate, joined.node(), zk.getSessionId(), sessionTtl);
        if (!place.node.equals(joined.line().first())) {
          if (places.keep(place)) {
            places.lineRead(place, joined.line());
          } else {
            leave(place); // not following: a refused attempt leaves no place behind
          }
          LeaseRecord holder = holderOrOrphan(zk, nodes, joined.line(), me, deadline, what);
          if (holder != null) {
            return Acquisition.held(holder);
          }
          continue;
        }
        // First in line at once: nobody holds the election, and the create is the grant, unless
        // a grant that wrote came between our create and our read (the holder before us began a
        // new term and then left): its token is above our node's zxid, so this grant writes too.
        if (joined.line().grantsOnRead(joined.stat())) {
          if (places.grant(place, true) != Places.Grant.REFUSED) {
            return granted(nodes, place, joined.stat(), started);
          }
          continue; // another call of the same candidate took a place meanwhile
        }
        Lease lease = writeGrant(zk, place, me, deadline, what, started);
        if (lease != null) {
          return Acquisition.granted(lease);
        }
        continue;
      } else if (places.isGranted(place)) {
        // Held by this candidate id already (an earlier call through this store): a live lease is
        // never granted again, not even to its holder's id, so the answer names it as any holder.
        Line line =
            seen(election, FreshReads.lineAfterAllWrites(zk, nodes, deadline, what), place.node);
        LeaseRecord holder =
            place.node.equals(line.first())
                ? holder(zk, nodes, line, sessionTtl, deadline, what)
                : null;
        if (holder != null) {
          return Acquisition.held(holder);
        }
        places.forget(place); // given back meanwhile, or gone with its session
        continue;
      }
      // A follower in line: a sync and, right behind it, a read of the line, one round trip. The
      // sync goes through the quorum leader, so its answer says that this session was alive there
      // after the call began, as a renewal's does: a member cut off from the quorum may still show
      // our node, though the quorum expired our session and granted the next one. The read needs
      // no write before it: a stale one can only show nodes that have gone, never hide one still
      // there (see Line).
      Reply<Void> synced = FreshReads.sync(zk);
      Reply<List<OpResult>> reading = FreshReads.line(zk, nodes, place.node);
      synced.await(deadline, election, what);
      List<OpResult> read = reading.await(deadline, election, what);
      Line line = seen(election, Line.of(read, nodes), place.node);
      NodeRead own = NodeRead.of(read.get(2), nodes.child(place.node));
      if (own == null || own.stat().getEphemeralOwner() != place.sessionId) {
        places.forget(place); // given back, or gone with its session
        continue;
      }
      places.version(place, own.stat().getVersion());
      places.lineRead(place, line);
      if (!place.node.equals(line.first())) {
        LeaseRecord holder = holderOrOrphan(zk, nodes, line, me, deadline, what);
        if (holder != null) {
          return Acquisition.held(holder);
        }
        continue;
      }
      // First in line, and no grant since we joined wrote a token above the node's own zxid: the
      // read is the grant. Otherwise the grant writes, so that its token is above every earlier
      // one.
      if (line.grantsOnRead(own.stat())) {
        if (places.grant(place, true) != Places.Grant.REFUSED) {
          return granted(nodes, place, own.stat(), started);
        }
        continue; // given back just now, or granted by a concurrent call: look again
      }
      Lease lease = writeGrant(zk, place, me, deadline, what, started);
      if (lease != null) {
        return Acquisition.granted(lease);
      }
    }
    throw new LeaseStoreException(
        election,
        what
            + ": no attempt settled within the call timeout (the line kept changing, or the connection came back too late) ("
            + callTimeout
            + ")");
  }

  /** Notes an election as contended when somebody other than {@code own} is first in its line. */
  private Line seen(String election, Line line, String own) {
    if (line.first() != null && !line.first().equals(own)) {
      seenInUse.add(election);
    }
    return line;
  }

  /**
   * A node just created in line, and the line as read right after the create; without a node (null)
   * when another candidate created the election first, with the line as read after that.
   */
  private record Joined(String node, Stat stat, Line line) {}

  /**
   * Takes a place in line: creates the candidate's node and, right behind it, reads the line, one
   * round trip. Null when the election node was missing; it exists when this returns.
   */
  private Joined join(
      ZooKeeper zk, ElectionNodes nodes, byte[] me, CallDeadline deadline, String what)
      throws KeeperException {
    Reply<Joined> created = new Reply<>();
    zk.create(
        nodes.rawCandidatePrefix(),
        me,
        acl,
        CreateMode.EPHEMERAL_SEQUENTIAL,
        (rc, path, ctx, name, stat) -> {
          if (rc != Code.OK.intValue()) {
            created.fail(rc, nodes.child(Line.CANDIDATE_PREFIX));
            return;
          }
          String node = ZKPaths.getNodeFromPath(name);
          if (!created.answer(new Joined(node, stat, null))) {
            // Created after the caller stopped waiting: nobody will take this place.
            leave(nodes, node);
          }
        },
        null);
    Reply<List<OpResult>> line = FreshReads.line(zk, nodes, null);
    Joined joined;
    try {
      joined = created.await(deadline, nodes.election(), what);
    } catch (KeeperException e) {
      if (e.code() != Code.NONODE) {
        throw e;
      }
      return joinNewElection(zk, nodes, me, deadline, what);
    }
    try {
      return new Joined(
          joined.node(),
          joined.stat(),
          Line.of(line.await(deadline, nodes.election(), what), nodes));
    } catch (KeeperException | RuntimeException e) {
      leave(nodes, joined.node()); // nobody will take a place whose line was not read
      throw e;
    }
  }

  /**
   * The election's first candidate: creates the election node and its own node under it in one
   * {@code multi}, one write where two in series would do, and reads the line right behind it. Null
   * when another candidate created the election node first, or when the base path is missing (it
   * exists when this returns): the caller goes round again.
   */
  private Joined joinNewElection(
      ZooKeeper zk, ElectionNodes nodes, byte[] me, CallDeadline deadline, String what)
      throws KeeperException {
    Reply<MultiAnswer> created = new Reply<>();
    zk.multi(
        List.of(
            Op.create(nodes.rawElectionPath(), NO_DATA, acl, CreateMode.PERSISTENT),
            Op.create(nodes.rawCandidatePrefix(), me, acl, CreateMode.EPHEMERAL_SEQUENTIAL)),
        (rc, path, ctx, results) -> {
          if (results == null) {
            created.fail(rc, nodes.electionPath());
            return;
          }
          MultiAnswer answer = MultiAnswer.of(rc, results);
          if (!created.answer(answer) && answer.succeeded()) {
            // Created after the caller stopped waiting: nobody will take this place.
            leave(nodes, createdNode(answer));
          }
        },
        null);
    // The first child of a new node is numbered 0, so the read can go out behind the create.
    String first = Line.CANDIDATE_PREFIX + "0000000000";
    Reply<List<OpResult>> line = FreshReads.line(zk, nodes, first);
    MultiAnswer answer = created.await(deadline, nodes.election(), what);
    if (!answer.succeeded()) {
      if (answer.code() == Code.NODEEXISTS) {
        // Another candidate created the election first. The read went out behind our refused
        // write, so it shows the line at least as new as that candidate's create.
        return new Joined(null, null, Line.of(line.await(deadline, nodes.election(), what), nodes));
      }
      if (answer.code() != Code.NONODE) {
        throw KeeperException.create(answer.code(), nodes.electionPath());
      }
      createElectionNode(nodes, deadline); // the base path is new too
      return null;
    }
    String node = createdNode(answer);
    try {
      List<OpResult> read = line.await(deadline, nodes.election(), what);
      NodeRead own =
          node.equals(first)
              ? NodeRead.of(read.get(2), nodes.child(node))
              : FreshReads.node(zk, nodes, node, deadline, what);
      if (own == null) {
        throw new LeaseStoreException(
            nodes.election(), what + ": " + nodes.child(node) + " was gone right after its create");
      }
      return new Joined(node, own.stat(), Line.of(read, nodes));
    } catch (KeeperException | RuntimeException e) {
      leave(nodes, node); // nobody will take a place whose line was not read
      throw e;
    }
  }

  private static String createdNode(MultiAnswer answer) {
    return ZKPaths.getNodeFromPath(((OpResult.CreateResult) answer.results().get(1)).getPath());
  }

  /**
   * A grant that writes: the candidate's node and the election node in one {@code multi}, so that
   * the token (the node's new {@code mzxid}) is above every token before it, and the election node
   * remembers it ({@link Line#lastWrittenGrant}). Null when the node is gone or was written
   * meanwhile: the place is forgotten, and the caller goes round again.
   */
  private Lease writeGrant(
      ZooKeeper zk, Place place, byte[] me, CallDeadline deadline, String what, long started)
      throws KeeperException {
    Places.Grant grant = places.grant(place, false);
    if (grant == Places.Grant.REFUSED) {
      return null;
    }
    ElectionNodes nodes = place.nodes;
    int expected = places.version(place);
    List<Op> ops =
        List.of(
            Op.setData(place.rawPath(), me, expected),
            Op.setData(nodes.rawElectionPath(), NO_DATA, -1));
    Reply<MultiAnswer> reply = new Reply<>();
    zk.multi(
        ops,
        (rc, path, ctx, results) -> {
          if (results == null) {
            reply.fail(rc, nodes.child(place.node));
          } else {
            reply.answer(MultiAnswer.of(rc, results)); // a late one: see below
          }
        },
        null);
    MultiAnswer answer;
    try {
      answer = reply.await(deadline, nodes.election(), what);
    } catch (KeeperException | RuntimeException e) {
      // The write may have applied, or may still apply: then a term nobody was told of holds the
      // node, and it goes back as an unrenewed lease does, a TTL after this call began (never
      // before the term it would follow could run out). Written at any other version, the node
      // is not touched.
      LeaseHandle unknown = new LeaseHandle(place.sessionId, place.node, expected + 1);
      unrenewed.confirmed(nodes, unknown, place.candidate, started, place.ttl);
      places.grantUnknown(place, grant);
      throw e;
    }
    if (!answer.succeeded()) {
      places.grantUnknown(place, grant); // refused: nothing applied
      if (answer.code() == Code.NONODE) {
        places.forget(place);
        return null; // the node is gone: given back, or ended with its session
      }
      if (answer.code() == Code.BADVERSION) {
        // Written since we last saw it: a write of ours whose answer was lost applied. Learn its
        // version, and the caller goes round again.
        NodeRead own = FreshReads.node(zk, nodes, place.node, deadline, what);
        if (own == null) {
          places.forget(place);
        } else {
          places.version(place, own.stat().getVersion());
        }
        return null;
      }
      throw KeeperException.create(answer.code(), nodes.child(place.node));
    }
    return granted(nodes, place, answer.firstWritten(), started).lease().orElseThrow();
  }

  private Acquisition granted(ElectionNodes nodes, Place place, Stat node, long started) {
    places.version(place, node.getVersion());
    LeaseHandle handle = new LeaseHandle(place.sessionId, place.node, node.getVersion());
    String text = handle.encode();
    // Kept for the release and the renewals, which would otherwise parse it back, uncompiled at a
    // handover.
    cache(handlesByText, text, handle);
    Lease lease =
        new Lease(
            nodes.election(), place.candidate, FencingToken.of(node.getMzxid()), place.ttl, text);
    unrenewed.confirmed(nodes, handle, place.candidate, started, place.ttl);
    return Acquisition.granted(lease);
  }

  /**
   * Who holds the election by {@code line}, for a refused candidate. Null when the first in line
   * went away between the two reads, or is this store's own dead leftover under the candidate's id:
   * a node of this session that is not a place, or of a session this store made nodes in and the
   * client has left since while the servers still keep it (after a restart they count its timeout
   * afresh). Such a node is one whose delete did not get through when the place was given up, or
   * one a create made whose answer was lost. It is deleted, since it would keep the candidate out
   * for as long as its session lives, and the caller reads again. A node of the candidate's id in a
   * session this store never had is another live process using the same id: a holder like any
   * other.
   */
  private LeaseRecord holderOrOrphan(
      ZooKeeper zk, ElectionNodes nodes, Line line, byte[] me, CallDeadline deadline, String what)
      throws KeeperException {
    NodeRead first = first(zk, nodes, line, deadline, what);
    if (first == null) {
      return null;
    }
    String candidate = new String(me, UTF_8);
    long owner = first.stat().getEphemeralOwner();
    boolean thisSession = owner == zk.getSessionId();
    boolean ownLeftover =
        thisSession
            ? !places.isPlace(nodes.election(), candidate, line.first())
            : sessionsHad.contains(owner);
    if (Arrays.equals(first.data(), me) && ownLeftover) {
      log.info(
          "election '{}', candidate '{}': {} was left in line {}; deleting it",
          nodes.election(),
          candidate,
          nodes.child(line.first()),
          thisSession
              ? "by an earlier give-back"
              : "by session 0x" + Long.toHexString(owner) + ", which this client has left");
      Code code = delete(zk, nodes, line.first(), -1, deadline, what);
      if (code != Code.OK && code != Code.NONODE) {
        throw KeeperException.create(code, nodes.child(line.first()));
      }
      return null;
    }
    return record(nodes.election(), line, first, sessionTtl(zk));
  }

  /**
   * Who holds the election now, for a lease that found its node gone, so that its holder learns who
   * leads; null when nobody does or the store cannot tell within the call.
   */
  String holderAfterLoss(ZooKeeper zk, ElectionNodes nodes, CallDeadline deadline) {
    try {
      Line line =
          Line.of(
              FreshReads.line(zk, nodes, null).await(deadline, nodes.election(), "read"), nodes);
      LeaseRecord holder = holder(zk, nodes, line, sessionTtl(zk), deadline, "read");
      return holder == null ? null : holder.holder();
    } catch (KeeperException | LeaseStoreException e) {
      log.debug("election '{}': who holds it after a loss is unknown", nodes.election(), e);
      return null;
    }
  }

  /**
   * Who holds the election by {@code line}: the first in line's id and token. Null when that node
   * went away between the two reads; the caller reads again.
   */
  private LeaseRecord holder(
      ZooKeeper zk,
      ElectionNodes nodes,
      Line line,
      Duration ttl,
      CallDeadline deadline,
      String what)
      throws KeeperException {
    NodeRead first = first(zk, nodes, line, deadline, what);
    return first == null ? null : record(nodes.election(), line, first, ttl);
  }

  /** The first in line's node; null when nobody is in line, or it left since the line was read. */
  private static NodeRead first(
      ZooKeeper zk, ElectionNodes nodes, Line line, CallDeadline deadline, String what)
      throws KeeperException {
    return line.first() == null ? null : FreshReads.node(zk, nodes, line.first(), deadline, what);
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    return renewAll(List.of(lease)).get(0).leaseOrThrow();
  }

  /**
   * Confirms every lease with one {@code sync}, and reads of the lease nodes not confirmed by an
   * earlier read and its watch, all sent together: one round trip for the batch, on the session's
   * one connection. Each lease gets the outcome {@link #renew} alone would have given it, as if it
   * started when this call started.
   */
  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    requireNonNull(leases, "leases");
    for (Lease lease : leases) {
      requireNonNull(lease, "leases must not contain null");
    }
    return new RenewalBatch(this, unrenewed, verified, clock, callTimeout, leases).renew();
  }

  /** 1000: a batch is one {@code sync}, and one read per lease whose node is not watched yet. */
  @Override
  public int renewBatchLimit() {
    return RENEW_BATCH_LIMIT;
  }

  /**
   * Just under the period at which the ZooKeeper client pings a connection that has sent nothing: a
   * renewal's {@code sync} is then sent before each ping is due and goes instead of it, so a leader
   * sends one request per ping period, as a client that only pings does. Renewing every retry
   * period instead would add a {@code sync} to the pings whenever the two periods differ (see the
   * package documentation for why a ping cannot confirm a lease itself).
   */
  @Override
  public Optional<Duration> renewalPeriod(Lease lease) {
    requireNonNull(lease, "lease");
    return Optional.of(SessionPings.renewalPeriod(lease.ttl()));
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    LeaseHandle handle = handle(lease);
    ElectionNodes nodes = nodes(lease.election());
    CallDeadline deadline = deadline();
    String what = "release of '" + lease.candidate() + "'";
    // Any session may delete the node: after a new session it is still ours until the old one
    // expires, and giving it back now lets the next candidate in at once. The version makes sure it
    // is this term's node: a later term of the same candidate wrote it.
    try {
      Code code =
          inLiveSession(
              lease.election(),
              deadline,
              zk -> delete(zk, nodes, handle.node(), handle.version(), deadline, what));
      if (code != Code.OK && code != Code.NONODE && code != Code.BADVERSION) {
        throw failure(
            lease.election(), what, KeeperException.create(code, nodes.child(handle.node())));
      }
      unrenewed.ended(nodes, handle);
      Place place = places.granted(lease.election(), lease.candidate(), handle);
      if (place != null && code != Code.BADVERSION) {
        places.forget(place);
      }
    } catch (KeeperException e) {
      throw failure(lease.election(), what, e);
    }
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    requireNonNull(election, "election");
    ElectionNodes nodes = nodes(election);
    CallDeadline deadline = deadline();
    try {
      return inLiveSession(
          election,
          deadline,
          zk -> {
            while (true) {
              Line line = FreshReads.lineAfterAllWrites(zk, nodes, deadline, "read");
              if (line.first() == null) {
                return Optional.<LeaseRecord>empty();
              }
              LeaseRecord holder = holder(zk, nodes, line, sessionTtl(zk), deadline, "read");
              if (holder != null) {
                return Optional.of(holder);
              }
              if (deadline.passed()) {
                throw new LeaseStoreException(
                    election,
                    "read: the first in line left before it could be read, on every attempt"
                        + " within the call timeout ("
                        + callTimeout
                        + ")");
              }
            }
          });
    } catch (KeeperException e) {
      throw failure(election, "read", e);
    }
  }

  /**
   * Calls {@code changed} whenever a candidate joins or leaves the election's line or a grant
   * writes the election node, including when the holder's session expires, when the connection is
   * suspended or lost (the watch is blind until the reconnect), and after every reconnect (events
   * may have been missed). {@code changed} runs on a ZooKeeper or Curator thread: it must not block
   * and must not call this store.
   */
  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    requireNonNull(election, "election");
    requireNonNull(changed, "changed");
    ensureOpen(election);
    return Optional.of(watches.watch(nodes(election), changed, deadline()));
  }

  /**
   * {@link #watch}, and keeps {@code candidate}'s place in line while the subscription is open: its
   * first refused {@link #tryAcquire} takes the place, and when the holder releases, or its session
   * ends, the first in line is granted by its next {@code tryAcquire} on a read alone. Closing the
   * subscription gives a place that was not granted back.
   */
  @Override
  public Optional<Subscription> follow(String election, String candidate, Runnable changed) {
    requireNonNull(election, "election");
    requireNonNull(candidate, "candidate");
    requireNonNull(changed, "changed");
    ensureOpen(election);
    ElectionNodes nodes = nodes(election);
    places.followed(election, candidate);
    AtomicBoolean open = new AtomicBoolean(true);
    Subscription watch;
    try {
      watch =
          watches.watch(
              nodes,
              () -> {
                places.lineChanged(election);
                if (places.farBehind(election, candidate)) {
                  tellLater(election, changed, open);
                } else {
                  changed.run();
                }
              },
              deadline());
    } catch (RuntimeException e) {
      places.unfollowed(election, candidate);
      throw e;
    }
    return Optional.of(
        () -> {
          if (open.compareAndSet(true, false)) {
            watch.close();
            places.unfollowed(election, candidate);
          }
        });
  }

  /**
   * Tells a follower far back in line of a change a moment late. Every follower is told of every
   * change, but a release makes only the next in line first: the others' tries, each a {@code sync}
   * and a read, would reach the servers together with its one, and slow the handover down. A
   * follower two places back still takes the lease this much later when everyone ahead of it left
   * at once.
   */
  private static void tellLater(String election, Runnable changed, AtomicBoolean open) {
    CompletableFuture.delayedExecutor(
            NEXT_IN_LINE_HEAD_START.toNanos(),
            TimeUnit.NANOSECONDS,
            UnrenewedLeases.ON_TIMER_THREAD)
        .execute(
            () -> {
              if (open.get()) {
                LeaseWatches.tell(election, changed);
              }
            });
  }

  /**
   * Watches the lease's own node (one {@code exists} with a data watch, on the lease's session):
   * its deletion, a newer term's write or the session's expiry tells {@code lost} on the client's
   * event thread. Renewals write nothing, so they cost the watch nothing. A lease whose session is
   * not the client's current one is told lost at once. See {@link LeaseNodeWatch}.
   */
  @Override
  public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    requireNonNull(lease, "lease");
    requireNonNull(lost, "lost");
    ensureOpen(lease.election());
    LeaseHandle handle = LeaseHandle.of(lease);
    ElectionNodes nodes = nodes(lease.election());
    LeaseNodeWatch watch = new LeaseNodeWatch(lease, lost);
    ZooKeeper zk = handle(lease.election());
    if (zk.getSessionId() != handle.sessionId()) {
      watch.gone("went with its session " + LeaseHandle.sessionText(handle.sessionId()));
    } else {
      zk.exists(nodes.rawChild(handle.node()), watch, watch, null);
    }
    return Optional.of(watch);
  }

  /** True: an expired session deletes its ephemeral node, which fires the watch. */
  @Override
  public boolean watchReportsExpiry() {
    return true;
  }

  /** Refuses names that cannot be ZooKeeper node names, such as names with '/'. */
  @Override
  public void checkElectionName(String election) {
    nodes(requireNonNull(election, "election"));
  }

  /**
   * Applies {@code ops} in one ZooKeeper {@code multi} that succeeds only while {@code lease} is
   * still the election's current grant and its session is this client's session. A leader that
   * writes its own state to ZooKeeper this way cannot overwrite its successor's, however late its
   * write arrives. Build the operations with {@code client.transactionOp()} of the client this
   * store uses.
   *
   * @return the results of {@code ops}, in order
   * @throws LeaseLostException when the lease is no longer current; none of {@code ops} applied
   * @throws KeeperException when one of {@code ops} failed while the lease was current; none
   *     applied. Its code and path are those of the first operation that failed.
   * @throws LeaseStoreException when ZooKeeper did not answer in time: whether {@code ops} applied
   *     is unknown
   */
  public List<OpResult> guarded(Lease lease, List<CuratorOp> ops) throws KeeperException {
    requireNonNull(lease, "lease");
    requireNonNull(ops, "ops");
    LeaseHandle handle = handle(lease);
    ElectionNodes nodes = nodes(lease.election());
    CallDeadline deadline = deadline();
    ZooKeeper zk = session(lease.election(), deadline);
    requireSameSession(lease, handle, zk);
    List<Op> all = new ArrayList<>(ops.size() + 1);
    all.add(Op.check(nodes.rawChild(handle.node()), handle.version()));
    for (CuratorOp op : ops) {
      all.add(requireNonNull(op, "ops must not contain null").get());
    }
    MultiAnswer answer;
    try {
      answer =
          multi(
              zk, all, deadline, "guarded write of '" + lease.candidate() + "'", lease.election());
    } catch (KeeperException e) {
      if (e.code() == Code.SESSIONEXPIRED) {
        throw lost(
            lease,
            "its ZooKeeper session " + LeaseHandle.sessionText(handle.sessionId()) + " expired",
            null);
      }
      throw failure(lease.election(), "guarded write of '" + lease.candidate() + "'", e);
    }
    if (answer.succeeded()) {
      return answer.results().subList(1, answer.results().size());
    }
    if (answer.failedAt() < 1) {
      throw lost(
          lease, "the election was released or granted again since (guarded write refused)", null);
    }
    throw KeeperException.create(
        answer.code(), ops.get(answer.failedAt() - 1).getTypeAndPath().getForPath());
  }

  @Override
  public String describe() {
    return "zookeeper (" + client.getZookeeperClient().getCurrentConnectionString() + ")";
  }

  /** Stops this store's watches; closes the client only when the store built it itself. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    connectPauses.close();
    watches.close();
    unrenewed.close();
    // Followers' places nobody will claim now; granted places are leases, and end as leases do.
    for (Place place : places.close()) {
      leave(place);
    }
    if (closesClient) {
      client.close();
    }
  }

  // ---- one election, one session ----

  ElectionNodes nodes(String election) {
    ElectionNodes nodes = nodesByElection.get(election);
    if (nodes == null) {
      nodes = ElectionNodes.of(basePath, client.getNamespace(), election);
      cache(nodesByElection, election, nodes);
    }
    return nodes;
  }

  /**
   * What the lease's handle says; throws IllegalArgumentException when another store granted it.
   */
  LeaseHandle handle(Lease lease) {
    LeaseHandle handle = handlesByText.get(lease.handle());
    if (handle == null) {
      handle = LeaseHandle.of(lease);
      cache(handlesByText, lease.handle(), handle);
    }
    return handle;
  }

  private static <V> void cache(Map<String, V> cache, String key, V value) {
    if (cache.size() >= CACHE_LIMIT) {
      cache.clear();
    }
    cache.putIfAbsent(key, value);
  }

  private CallDeadline deadline() {
    return CallDeadline.start(clock, callTimeout);
  }

  private void ensureOpen(String election) {
    if (closed) {
      throw new LeaseStoreException(election, "the ZooKeeper lease store is closed");
    }
    CuratorFrameworkState state = client.getState();
    if (state != CuratorFrameworkState.STARTED) {
      throw new LeaseStoreException(
          election,
          "the CuratorFramework is " + state + "; it must be started before the store is used");
    }
  }

  /**
   * The client's current ZooKeeper handle, once it has had a session.
   *
   * @param election the election a failure concerns; null when it concerns several
   */
  ZooKeeper session(String election, CallDeadline deadline) {
    ensureOpen(election);
    ZooKeeper zk = handle(election);
    if (zk.getSessionTimeout() > 0) {
      return zk;
    }
    // No session yet: the client's first, or one that replaces an expired session. The handle
    // itself says when it has one; Curator's connection state can lag behind it (a LOST of the
    // handle before may be posted after this one connected, CURATOR-525), so it only wakes us.
    try {
      while (!deadline.passed()) {
        connectPauses.cutShort(zk, election);
        long waitMillis =
            Math.max(
                1,
                Math.min(SESSION_POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(deadline.leftNanos())));
        client.blockUntilConnected((int) waitMillis, TimeUnit.MILLISECONDS);
        ensureOpen(election);
        zk = handle(election);
        if (zk.getSessionTimeout() > 0) {
          return zk;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(
          election, "interrupted while waiting for a ZooKeeper session", e);
    }
    throw new LeaseStoreException(
        election,
        "no ZooKeeper session with "
            + client.getZookeeperClient().getCurrentConnectionString()
            + " within the call timeout ("
            + callTimeout
            + ")");
  }

  /** One attempt of a call in one session. */
  @FunctionalInterface
  private interface SessionCall<T> {
    T in(ZooKeeper zk) throws KeeperException;
  }

  /**
   * Runs {@code call} in the client's session, and again in the next session if ZooKeeper answers
   * that this one expired, or once the client is connected again if the connection was lost under
   * the call. Only for calls that no session owns (a grant, a read, a release): an expired session
   * applied nothing, and a client cut off until its session expired learns so only when it
   * reconnects (its requests sent meanwhile fail with a lost connection), so the first call after a
   * long cut would otherwise fail for no reason the caller can act on. A grant tried again is safe:
   * a write whose outcome is unknown is never granted on a read (see {@link Places}), and a node
   * left in line by it is deleted by the candidate's next campaign. Renewals and guarded writes
   * belong to their lease's session and are told the lease is lost instead.
   */
  private <T> T inLiveSession(String election, CallDeadline deadline, SessionCall<T> call)
      throws KeeperException {
    ZooKeeper zk = session(election, deadline);
    while (true) {
      try {
        return call.in(zk);
      } catch (KeeperException e) {
        if (deadline.passed()
            || (e.code() != Code.SESSIONEXPIRED && e.code() != Code.CONNECTIONLOSS)) {
          throw e;
        }
        zk =
            e.code() == Code.SESSIONEXPIRED
                ? sessionAfter(zk, election, deadline)
                : reconnected(election, deadline, e);
      }
    }
  }

  /** The client's handle once it is connected again; {@code lost} when not within the call. */
  private ZooKeeper reconnected(String election, CallDeadline deadline, KeeperException lost)
      throws KeeperException {
    try {
      long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline.leftNanos()));
      if (client.blockUntilConnected(
          (int) Math.min(Integer.MAX_VALUE, waitMillis), TimeUnit.MILLISECONDS)) {
        return session(election, deadline);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(election, "interrupted while waiting for ZooKeeper", e);
    }
    throw lost;
  }

  /**
   * The session Curator opens after {@code expired}: it replaces the handle once the expiry reaches
   * its watcher, a moment after the call that saw it.
   */
  private ZooKeeper sessionAfter(ZooKeeper expired, String election, CallDeadline deadline) {
    while (!deadline.passed()) {
      ZooKeeper zk = session(election, deadline);
      if (zk != expired) {
        return zk;
      }
      LockSupport.parkNanos(Math.min(deadline.leftNanos(), TimeUnit.MILLISECONDS.toNanos(5)));
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new LeaseStoreException(
            election, "interrupted while waiting for a new ZooKeeper session");
      }
    }
    throw new LeaseStoreException(
        election,
        "the ZooKeeper session expired and no new one was opened within the call timeout ("
            + callTimeout
            + ")");
  }

  private ZooKeeper handle(String election) {
    try {
      return client.getZookeeperClient().getZooKeeper();
    } catch (Exception e) {
      throw new LeaseStoreException(election, "no ZooKeeper connection", e);
    }
  }

  private static Duration sessionTtl(ZooKeeper zk) {
    return Duration.ofMillis(zk.getSessionTimeout());
  }

  private static void requireSameSession(Lease lease, LeaseHandle handle, ZooKeeper zk) {
    if (zk.getSessionId() != handle.sessionId()) {
      throw sessionEnded(lease, handle, zk);
    }
  }

  static LeaseLostException sessionEnded(Lease lease, LeaseHandle handle, ZooKeeper zk) {
    return lost(
        lease,
        "its ZooKeeper session "
            + LeaseHandle.sessionText(handle.sessionId())
            + " ended; the client is now in session "
            + LeaseHandle.sessionText(zk.getSessionId()),
        null);
  }

  // ---- requests ----

  /**
   * Deletes a candidate's node if it is still at {@code version} (-1: any), and answers how that
   * went: OK, or NONODE or BADVERSION when it had gone or changed already. Other failures are
   * answered too, for the caller to judge.
   */
  private Code delete(
      ZooKeeper zk,
      ElectionNodes nodes,
      String node,
      int version,
      CallDeadline deadline,
      String what)
      throws KeeperException {
    Reply<Code> reply = new Reply<>();
    zk.delete(
        nodes.rawChild(node),
        version,
        (rc, path, ctx) -> {
          if (rc == Code.SESSIONEXPIRED.intValue()) {
            reply.fail(rc, nodes.child(node)); // the call goes on in the next session
          } else {
            reply.answer(Code.get(rc));
          }
        },
        null);
    return reply.await(deadline, nodes.election(), what);
  }

  /**
   * Takes a place out of the line without waiting: a refused attempt of a candidate that does not
   * follow, a follower that stopped, a place nobody claimed, a place of a session the client has
   * left (any session may delete a node, and nobody leads on such a place: renewals are pinned to
   * their lease's session, and its candidate is campaigning again).
   */
  private void leave(Place place) {
    leave(place.nodes, place.node);
  }

  /**
   * Deletes {@code node} without waiting, and again every call timeout while ZooKeeper cannot be
   * reached: a node left in line would keep the others out for as long as its session lives. Until
   * the store closes; a candidate's next campaign also deletes such a node of its own.
   */
  private void leave(ElectionNodes nodes, String node) {
    ZooKeeper zk;
    try {
      zk = client.getZookeeperClient().getZooKeeper();
    } catch (Exception e) {
      leaveLater(nodes, node, e.toString());
      return;
    }
    zk.delete(
        nodes.rawChild(node),
        -1,
        (rc, path, ctx) -> {
          Code code = Code.get(rc);
          if (code == Code.OK || code == Code.NONODE) {
            return;
          }
          if (LeaseWatches.isConnectionProblem(code)) {
            leaveLater(nodes, node, code.toString());
          } else {
            log.warn(
                "election '{}': could not take {} out of the line ({}); it ends with its session",
                nodes.election(),
                nodes.child(node),
                code);
          }
        },
        null);
  }

  private void leaveLater(ElectionNodes nodes, String node, String why) {
    if (closed) {
      log.warn(
          "election '{}': could not take {} out of the line before the store closed ({}); it ends"
              + " with its session",
          nodes.election(),
          nodes.child(node),
          why);
      return;
    }
    log.debug(
        "election '{}': taking {} out of the line again later ({})",
        nodes.election(),
        nodes.child(node),
        why);
    CompletableFuture.delayedExecutor(
            callTimeout.toNanos(), TimeUnit.NANOSECONDS, UnrenewedLeases.ON_TIMER_THREAD)
        .execute(() -> leave(nodes, node));
  }

  private void createElectionNode(ElectionNodes nodes, CallDeadline deadline)
      throws KeeperException {
    Reply<Void> reply = new Reply<>();
    try {
      client
          .create()
          .creatingParentsIfNeeded()
          .withMode(CreateMode.PERSISTENT)
          .withACL(acl, true)
          .inBackground(
              (c, event) -> {
                int rc = event.getResultCode();
                if (rc == Code.OK.intValue() || rc == Code.NODEEXISTS.intValue()) {
                  reply.answer(null);
                } else {
                  reply.fail(rc, nodes.electionPath());
                }
              })
          .forPath(nodes.electionPath(), NO_DATA);
    } catch (Exception e) {
      throw new LeaseStoreException(nodes.election(), "cannot create " + nodes.electionPath(), e);
    }
    reply.await(deadline, nodes.election(), "create " + nodes.electionPath());
  }

  private MultiAnswer multi(
      ZooKeeper zk, List<Op> ops, CallDeadline deadline, String what, String election)
      throws KeeperException {
    Reply<MultiAnswer> reply = new Reply<>();
    zk.multi(
        ops,
        (rc, path, ctx, results) -> {
          if (results == null) {
            reply.fail(rc, path);
          } else {
            reply.answer(MultiAnswer.of(rc, results));
          }
        },
        null);
    return reply.await(deadline, election, what);
  }

  /**
   * The first in line as a record. Its token is its node's {@code mzxid}, or the last grant's that
   * wrote when that is higher: the first in line has not been granted yet then, and will write.
   */
  private static LeaseRecord record(String election, Line line, NodeRead first, Duration ttl) {
    long token =
        line.first().equals(Line.EARLIER_LEASE_NODE)
            ? first.stat().getCzxid()
            : Math.max(first.stat().getMzxid(), line.lastWrittenGrant());
    return new LeaseRecord(
        election,
        new String(first.data(), UTF_8),
        FencingToken.of(token),
        ttl,
        Optional.empty(),
        Optional.empty());
  }

  static LeaseLostException lost(Lease lease, String why, String holder) {
    return new LeaseLostException(
        lease.election(),
        "lease of '" + lease.candidate() + "' (token " + lease.token() + ") is lost: " + why,
        holder);
  }

  static LeaseStoreException failure(String election, String what, KeeperException e) {
    String hint = "";
    if (e.code() == Code.NOAUTH || e.code() == Code.AUTHFAILED) {
      hint = " (check election.zookeeper.digest and the ACLs on the election nodes)";
    } else if (e.code() == Code.INVALIDACL) {
      hint = " (the 'creator' ACL needs digest credentials)";
    }
    String path = e.getPath() == null ? "" : " for " + e.getPath();
    return new LeaseStoreException(
        election, what + ": ZooKeeper answered " + e.code() + path + hint, e);
  }

  /** Configures a {@link ZooKeeperLeaseStore}; every setting has a default. */
  public static final class Builder {

    private final CuratorFramework client;
    private String basePath = DEFAULT_BASE_PATH;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private List<ACL> acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;
    private MonotonicClock clock = MonotonicClock.system();
    private boolean closesClient;

    private Builder(CuratorFramework client) {
      this.client = client;
    }

    /**
     * The node under which each election gets its own node; default {@value #DEFAULT_BASE_PATH}.
     */
    public Builder basePath(String basePath) {
      requireNonNull(basePath, "basePath");
      try {
        ElectionNodes.checkBasePath(basePath);
      } catch (IllegalArgumentException e) {
        throw new ConfigurationException("basePath: " + e.getMessage(), e);
      }
      this.basePath = basePath;
      return this;
    }

    /**
     * How long any call waits for ZooKeeper before it fails with a {@link LeaseStoreException}
     * (default 3 s): at most half the renew deadline it is used with ({@link CallTimeout}).
     */
    public Builder callTimeout(Duration callTimeout) {
      this.callTimeout = CallTimeout.check("callTimeout", callTimeout);
      return this;
    }

    /**
     * The ACL of the nodes the store creates (the election nodes, the lease nodes and missing
     * parents of the base path); default {@link ZooDefs.Ids#OPEN_ACL_UNSAFE}. With {@link
     * ZooDefs.Ids#CREATOR_ALL_ACL} the client needs credentials (digest auth), and every candidate
     * must use the same ones.
     */
    public Builder acl(List<ACL> acl) {
      requireNonNull(acl, "acl");
      if (acl.isEmpty()) {
        throw new ConfigurationException(
            "acl: an empty list is not accepted; use ZooDefs.Ids.OPEN_ACL_UNSAFE for an open one");
      }
      this.acl = List.copyOf(acl);
      return this;
    }

    /** The clock that measures calls and lease expiry on this side; the system's by default. */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    /** For the provider: the store closes the client it was given, which the provider built. */
    Builder closesClient() {
      this.closesClient = true;
      return this;
    }

    public ZooKeeperLeaseStore build() {
      return new ZooKeeperLeaseStore(this);
    }
  }
}
