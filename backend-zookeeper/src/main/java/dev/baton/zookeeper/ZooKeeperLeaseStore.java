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
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.CuratorFrameworkState;
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
 * A {@link LeaseStore} on ZooKeeper: a lease is an ephemeral node, so it lives exactly as long as
 * the ZooKeeper session that created it, as judged by the ZooKeeper servers.
 *
 * <p>Each election has a persistent node {@code <basePath>/<election>} and, while somebody holds
 * it, an ephemeral child {@code lease} whose data is the holder's candidate id. A grant creates the
 * lease node and bumps the election node's version in one {@code multi}; its fencing token is the
 * lease node's {@code czxid}, which grows with every grant, including a new term for the same
 * candidate (the node is then deleted and created again in the same {@code multi}). A term's first
 * renewal reads the lease node after a {@code sync}, checks that it is still the one granted and
 * watches it; later renewals are the {@code sync} alone while the watch has not fired. Release and
 * {@link #guarded guarded writes} are conditional on the election node's version, which only a new
 * grant changes.
 *
 * <p>Many elections, and many candidates, share one {@link CuratorFramework} and its session; the
 * lease node's data tells candidates of one session apart. The session timeout is the lease's TTL:
 * the {@code ttl} asked for in {@link #tryAcquire} cannot change it, and a {@code ttl} longer than
 * the session timeout is refused, since the lease would not last that long. {@link LeaseRecord}s of
 * other holders report this store's session timeout; their own may differ.
 *
 * <p>A lease also ends when its holder has not renewed it for its TTL while the session lives on (a
 * stuck elector): the store then deletes the node itself, see the package documentation. A
 * candidate's node left by an earlier session of this store counts as its own, so its next {@code
 * tryAcquire} begins a new term at once instead of waiting for the servers to expire the old
 * session.
 *
 * <p>Every call is a few round trips at most on the client's current ZooKeeper handle (a grant of a
 * free election one, a refusal two, a new term for the holder three), all waited for no longer than
 * the call timeout together. Renewals and guarded writes are pinned to their lease's session on
 * purpose: Curator would retry an operation on a new session, where "this node is mine" no longer
 * means what it did. A grant, a read or a release belongs to no session, and one that finds its
 * session expired (a client cut off until then learns so only when it reconnects) goes on in the
 * next session within its call timeout.
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
  private static final byte[] NO_DATA = new byte[0];

  private final CuratorFramework client;
  private final String basePath;
  private final Duration callTimeout;
  private final List<ACL> acl;
  private final boolean closesClient;
  private final MonotonicClock clock;
  private final LeaseWatches watches;
  private final UnrenewedLeases unrenewed;
  private final VerifiedLeaseNodes verified = new VerifiedLeaseNodes();

  /** Sessions this store granted leases in; a node of an earlier one is this candidate's own. */
  private final Set<Long> grantingSessions = ConcurrentHashMap.newKeySet();

  private final Map<String, ElectionNodes> nodesByElection = new ConcurrentHashMap<>();
  private final Map<String, LeaseHandle> handlesByText = new ConcurrentHashMap<>();
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
    // The grant goes first, and a read only follows a refused one. ZooKeeper orders every write at
    // the quorum leader, so the grant sees each write acknowledged before it, by whichever member.
    // A read does not, even after a sync: a client of the quorum leader can be answered before the
    // leader has applied a commit that a follower has already acknowledged (the leader sends the
    // commit out before applying it), and a campaign that read first could call an election held
    // that its holder has just released. A read sent after our refused write comes after it in
    // this session's order, so it shows the election at least as new as the refusal.
    GrantKind kind = GrantKind.FREE;
    int electionVersion = -1;
    // Each refusal says what to write next. Only an election that is taken at every write and
    // free at every read keeps us here, until the call timeout.
    while (!deadline.passed()) {
      List<Op> ops =
          switch (kind) {
            case FREE ->
                List.of(createLease(nodes, me), Op.setData(nodes.rawElectionPath(), NO_DATA, -1));
            // The election's first grant creates its node too: one write instead of two.
            case NEW_ELECTION ->
                List.of(
                    Op.create(nodes.rawElectionPath(), NO_DATA, acl, CreateMode.PERSISTENT),
                    createLease(nodes, me),
                    Op.setData(nodes.rawElectionPath(), NO_DATA, -1));
            // Ours already: a new term. The version check makes sure it is still the node we
            // read.
            case NEW_TERM ->
                List.of(
                    Op.setData(nodes.rawElectionPath(), NO_DATA, electionVersion),
                    Op.delete(nodes.rawLeasePath(), -1),
                    createLease(nodes, me));
          };
      MultiAnswer answer = grant(zk, nodes, candidate, ops, deadline);
      if (answer.succeeded()) {
        Lease mine = leaseOf(zk, nodes, candidate, answer);
        unrenewed.confirmed(nodes, LeaseHandle.of(mine), candidate, started, mine.ttl());
        return Acquisition.granted(mine);
      }
      if (kind == GrantKind.NEW_ELECTION) {
        if (answer.code() == Code.NONODE) {
          createElectionNode(nodes, deadline); // the base path is new too
        }
        kind = GrantKind.FREE; // or another candidate created the election node first
        continue;
      }
      if (kind == GrantKind.FREE && answer.code() == Code.NONODE) {
        kind = GrantKind.NEW_ELECTION; // no election node to create the lease node under
        continue;
      }
      List<OpResult> read = FreshReads.electionAfterOwnWrite(zk, nodes, deadline);
      NodeRead lease = NodeRead.of(read.get(0), nodes.leasePath());
      NodeRead electionNode = NodeRead.of(read.get(1), nodes.electionPath());
      if (lease == null) {
        kind =
            electionNode == null
                ? GrantKind.NEW_ELECTION
                : GrantKind.FREE; // given up since our write
      } else if (!Arrays.equals(lease.data(), me)
          || !isOurs(lease.stat().getEphemeralOwner(), zk)) {
        return Acquisition.held(record(election, lease, sessionTtl));
      } else if (electionNode == null
          || electionNode.stat().getMzxid() != lease.stat().getCzxid()) {
        kind = GrantKind.FREE; // our lease node, but read across another grant: look again
      } else {
        kind = GrantKind.NEW_TERM;
        electionVersion = electionNode.stat().getVersion();
      }
    }
    throw new LeaseStoreException(
        election,
        "tryAcquire for '"
            + candidate
            + "': the election changed between write and read on every attempt within the call timeout ("
            + callTimeout
            + ")");
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
    LeaseHandle handle = LeaseHandle.of(lease);
    ElectionNodes nodes = nodes(lease.election());
    CallDeadline deadline = deadline();
    // Any session may delete the node: after a new session it is still ours until the old one
    // expires, and giving it back now lets the next candidate in at once.
    List<Op> ops =
        List.of(
            Op.check(nodes.rawElectionPath(), handle.electionVersion()),
            Op.delete(nodes.rawLeasePath(), -1));
    String what = "release of '" + lease.candidate() + "'";
    try {
      MultiAnswer answer =
          inLiveSession(
              lease.election(), deadline, zk -> multi(zk, ops, deadline, what, lease.election()));
      if (!answer.succeeded() && !isChangedElection(answer.code())) {
        throw failure(
            lease.election(),
            "release of '" + lease.candidate() + "'",
            KeeperException.create(answer.code(), nodes.leasePath()));
      }
      unrenewed.ended(nodes, handle);
    } catch (KeeperException e) {
      throw failure(lease.election(), "release of '" + lease.candidate() + "'", e);
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
            NodeRead node = FreshReads.leaseNodeAfterAllWrites(zk, nodes, deadline, "read");
            return node == null
                ? Optional.<LeaseRecord>empty()
                : Optional.of(record(election, node, sessionTtl(zk)));
          });
    } catch (KeeperException e) {
      throw failure(election, "read", e);
    }
  }

  /**
   * Calls {@code changed} whenever the election's lease node is created, changed or deleted,
   * including when the holder's session expires, when the connection is suspended or lost (the
   * watch is blind until the reconnect), and after every reconnect (events may have been missed).
   * {@code changed} runs on a ZooKeeper or Curator thread: it must not block and must not call this
   * store.
   */
  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    requireNonNull(election, "election");
    requireNonNull(changed, "changed");
    ensureOpen(election);
    return Optional.of(watches.watch(nodes(election), changed, deadline()));
  }

  /** True: an expired session deletes its ephemeral lease node, which fires the watch. */
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
    LeaseHandle handle = LeaseHandle.of(lease);
    ElectionNodes nodes = nodes(lease.election());
    CallDeadline deadline = deadline();
    ZooKeeper zk = session(lease.election(), deadline);
    requireSameSession(lease, handle, zk);
    List<Op> all = new ArrayList<>(ops.size() + 2);
    all.add(Op.check(nodes.rawElectionPath(), handle.electionVersion()));
    all.add(Op.check(nodes.rawLeasePath(), -1));
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
      return answer.results().subList(2, answer.results().size());
    }
    if (answer.failedAt() < 2) {
      throw lost(
          lease, "the election was released or granted again since (guarded write refused)", null);
    }
    throw KeeperException.create(
        answer.code(), ops.get(answer.failedAt() - 2).getTypeAndPath().getForPath());
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
    watches.close();
    unrenewed.close();
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
    // Never connected yet: there is no session to act in.
    try {
      long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline.leftNanos()));
      if (client.blockUntilConnected(
          (int) Math.min(Integer.MAX_VALUE, waitMillis), TimeUnit.MILLISECONDS)) {
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
   * that this one expired. Only for calls that no session owns (a grant, a read, a release): an
   * expired session applied nothing, and a client cut off until its session expired learns so only
   * when it reconnects, so the first call after a long cut would otherwise fail for no reason the
   * caller can act on. Renewals and guarded writes belong to their lease's session and are told the
   * lease is lost instead.
   */
  private <T> T inLiveSession(String election, CallDeadline deadline, SessionCall<T> call)
      throws KeeperException {
    ZooKeeper zk = session(election, deadline);
    while (true) {
      try {
        return call.in(zk);
      } catch (KeeperException e) {
        if (e.code() != Code.SESSIONEXPIRED || deadline.passed()) {
          throw e;
        }
        zk = sessionAfter(zk, election, deadline);
      }
    }
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

  /**
   * Whether a lease node owned by {@code owner} is ours to begin a new term on: the current
   * session's, or an earlier session's of this store. Curator has left an earlier session for good
   * (renewals in it are refused), but its node stays until the servers expire it, which after an
   * ensemble restart can be a whole session timeout after this client took a new session.
   */
  private boolean isOurs(long owner, ZooKeeper zk) {
    return owner == zk.getSessionId() || grantingSessions.contains(owner);
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

  private Op createLease(ElectionNodes nodes, byte[] candidate) {
    return Op.create(nodes.rawLeasePath(), candidate, acl, CreateMode.EPHEMERAL);
  }

  /**
   * Runs a grant: a {@code multi} that creates the lease node and bumps the election node. Its zxid
   * is the new node's {@code czxid}, and shows as the election node's {@code mzxid}. A refusal
   * because the election changed (NODEEXISTS, NONODE, BADVERSION) is answered; any other failure is
   * thrown. A grant confirmed after its caller gave up is given back at once.
   */
  private MultiAnswer grant(
      ZooKeeper zk, ElectionNodes nodes, String candidate, List<Op> ops, CallDeadline deadline)
      throws KeeperException {
    Reply<MultiAnswer> reply = new Reply<>();
    zk.multi(
        ops,
        (rc, path, ctx, results) -> {
          if (results == null) {
            reply.fail(rc, nodes.leasePath());
            return;
          }
          MultiAnswer answer = MultiAnswer.of(rc, results);
          if (!reply.answer(answer) && answer.succeeded()) {
            giveBackLateGrant(zk, nodes, candidate, answer.electionStat());
          }
        },
        null);
    MultiAnswer answer =
        reply.await(deadline, nodes.election(), "tryAcquire for '" + candidate + "'");
    if (!answer.succeeded() && !isChangedElection(answer.code())) {
      throw KeeperException.create(answer.code(), nodes.leasePath());
    }
    return answer;
  }

  private Lease leaseOf(ZooKeeper zk, ElectionNodes nodes, String candidate, MultiAnswer granted) {
    Stat bumped = granted.electionStat();
    grantingSessions.add(zk.getSessionId());
    LeaseHandle handle = new LeaseHandle(zk.getSessionId(), bumped.getVersion());
    return new Lease(
        nodes.election(),
        candidate,
        FencingToken.of(bumped.getMzxid()),
        sessionTtl(zk),
        handle.encode());
  }

  private void giveBackLateGrant(ZooKeeper zk, ElectionNodes nodes, String candidate, Stat bumped) {
    List<Op> ops =
        List.of(
            Op.check(nodes.rawElectionPath(), bumped.getVersion()),
            Op.delete(nodes.rawLeasePath(), -1));
    zk.multi(
        ops,
        (rc, path, ctx, results) -> {
          if (rc != Code.OK.intValue() && !isChangedElection(Code.get(rc))) {
            log.warn(
                "election '{}', candidate '{}': a grant confirmed after its caller stopped waiting could not be given back ({});"
                    + " it ends with the session",
                nodes.election(),
                candidate,
                Code.get(rc));
          }
        },
        null);
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

  /** The election moved on between our read and our write: another grant, or a release. */
  private static boolean isChangedElection(Code code) {
    return code == Code.NODEEXISTS || code == Code.BADVERSION || code == Code.NONODE;
  }

  private static LeaseRecord record(String election, NodeRead lease, Duration ttl) {
    return new LeaseRecord(
        election,
        new String(lease.data(), UTF_8),
        FencingToken.of(lease.stat().getCzxid()),
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

  /** What a campaign writes: what the last refusal, and the read after it, showed. */
  private enum GrantKind {
    /** The lease node, under an election node that exists. */
    FREE,
    /** The election node and the lease node. */
    NEW_ELECTION,
    /** A new term on our own lease node. */
    NEW_TERM
  }
}
