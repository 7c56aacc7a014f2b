package dev.baton.zookeeper;

import static dev.baton.zookeeper.ZooKeeperServers.uniqueElection;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.apache.curator.framework.state.ConnectionState.LOST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.baton.conformance.FaultProxy;
import dev.baton.election.Acquisition;
import dev.baton.election.ConfigurationException;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import dev.baton.election.Subscription;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.test.KillSession;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The lease contract on a real ZooKeeper server: two candidates, each with its own session. */
class ZooKeeperLeaseStoreIT {

  private static final Duration SESSION = ZooKeeperServers.MAX_SESSION;
  private static final Duration TTL = Duration.ofSeconds(2);

  /**
   * For holders whose session a test lets expire: short, yet not so short that a busy machine
   * expires it early.
   */
  private static final Duration SHORT_SESSION = Duration.ofSeconds(2);

  /** Long enough for any change a test waits for: a short session expiring, a watch firing. */
  private static final Duration PATIENCE = Duration.ofSeconds(20);

  private static ZooKeeperServers servers;
  private static TestingServer server;

  private ZooKeeperServers perTest;
  private CuratorFramework clientA;
  private CuratorFramework clientB;
  private ZooKeeperLeaseStore storeA;
  private ZooKeeperLeaseStore storeB;

  @BeforeAll
  static void startServer() {
    servers = new ZooKeeperServers();
    server = servers.server();
  }

  @AfterAll
  static void stopServer() {
    servers.close();
  }

  @BeforeEach
  void openStores() {
    perTest = new ZooKeeperServers();
    clientA = perTest.client(server.getConnectString(), SESSION);
    clientB = perTest.client(server.getConnectString(), SESSION);
    storeA = store(clientA);
    storeB = store(clientB);
  }

  @AfterEach
  void closeStores() {
    perTest.close();
  }

  private ZooKeeperLeaseStore store(CuratorFramework client) {
    ZooKeeperLeaseStore store =
        ZooKeeperLeaseStore.builder(client).callTimeout(Duration.ofSeconds(2)).build();
    perTest.closeLater(store);
    return store;
  }

  private static Lease granted(Acquisition acquisition) {
    assertThat(acquisition.isGranted()).as("granted: %s", acquisition).isTrue();
    return acquisition.lease().orElseThrow();
  }

  private static LeaseRecord held(Acquisition acquisition) {
    assertThat(acquisition.isGranted()).as("refused: %s", acquisition).isFalse();
    return acquisition.holder().orElseThrow();
  }

  @Test
  void grantsAFreeElectionAndRefusesAnotherCandidateWhileItIsHeld() {
    String election = uniqueElection("exclusion");

    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    LeaseRecord holder = held(storeB.tryAcquire(election, "b", TTL));

    assertThat(lease.election()).isEqualTo(election);
    assertThat(lease.candidate()).isEqualTo("a");
    assertThat(holder.holder()).isEqualTo("a");
    assertThat(holder.token()).isEqualTo(lease.token());
    assertThat(holder.expiresIn()).isEmpty();
  }

  @Test
  void everyGrantBeginsANewTermWithAHigherTokenAlsoForTheSameCandidateAfterItsRelease() {
    String election = uniqueElection("terms");

    Lease first = granted(storeA.tryAcquire(election, "a", TTL));
    storeA.release(first);
    Lease again = granted(storeA.tryAcquire(election, "a", TTL));
    storeA.release(again);
    Lease other = granted(storeB.tryAcquire(election, "b", TTL));

    assertThat(again.token().isNewerThan(first.token()))
        .as("%s after %s", again.token(), first.token())
        .isTrue();
    assertThat(other.token().isNewerThan(again.token()))
        .as("%s after %s", other.token(), again.token())
        .isTrue();
    assertThat(storeA.read(election).orElseThrow().token()).isEqualTo(other.token());
  }

  @Test
  void renewKeepsTheTokenAndReportsTheNegotiatedSessionTimeoutAsTtl() throws Exception {
    String election = uniqueElection("renew");
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));

    Lease renewed = storeA.renew(storeA.renew(lease));

    Duration negotiated =
        Duration.ofMillis(clientA.getZookeeperClient().getZooKeeper().getSessionTimeout());
    assertThat(renewed.token()).isEqualTo(lease.token());
    assertThat(renewed.ttl())
        .isEqualTo(negotiated)
        .isEqualTo(lease.ttl())
        .isGreaterThanOrEqualTo(TTL);
  }

  @Test
  void renewIsRefusedAfterReleaseAndAfterTakeover() {
    String election = uniqueElection("renew-refused");
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    storeA.release(lease);

    assertThatThrownBy(() -> storeA.renew(lease)).isInstanceOf(LeaseLostException.class);

    granted(storeB.tryAcquire(election, "b", TTL));
    assertThatThrownBy(() -> storeA.renew(lease))
        .isInstanceOfSatisfying(
            LeaseLostException.class, e -> assertThat(e.holder()).contains("b"));
  }

  @Test
  void renewOfAnEarlierTermOfTheSameCandidateIsRefused() {
    String election = uniqueElection("earlier-term");
    Lease first = granted(storeA.tryAcquire(election, "a", TTL));
    storeA.release(first);
    Lease second = granted(storeA.tryAcquire(election, "a", TTL));

    assertThatThrownBy(() -> storeA.renew(first)).isInstanceOf(LeaseLostException.class);
    assertThat(storeA.renew(second).token()).isEqualTo(second.token());
  }

  @Test
  void aRenewalConfirmedByTheSyncAloneStillNoticesEveryChangeToTheLeaseNode() throws Exception {
    String election = uniqueElection("watched");
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    String leasePath = storeA.nodes(election).child(LeaseHandle.of(lease).node());
    storeA.renew(lease); // reads the node and watches it
    assertThat(storeA.renew(lease).token()).isEqualTo(lease.token()); // the sync alone

    // Nothing in Baton deletes another session's live lease node, but an operator may.
    clientB.delete().forPath(leasePath);

    assertThatThrownBy(() -> storeA.renew(lease)).isInstanceOf(LeaseLostException.class);
    Lease next = granted(storeB.tryAcquire(election, "b", TTL));
    assertThatThrownBy(() -> storeA.renew(lease))
        .isInstanceOfSatisfying(
            LeaseLostException.class, e -> assertThat(e.holder()).contains("b"));
    storeB.renew(next);
    assertThat(storeB.renew(next).token()).isEqualTo(next.token());
  }

  @Test
  void aNewTermEndsTheWatchedEarlierTermOfTheSameCandidate() {
    String election = uniqueElection("watched-term");
    Lease first = granted(storeA.tryAcquire(election, "a", TTL));
    storeA.renew(first);
    storeA.renew(first);
    storeA.release(first);

    Lease second = granted(storeA.tryAcquire(election, "a", TTL));

    assertThatThrownBy(() -> storeA.renew(first)).isInstanceOf(LeaseLostException.class);
    assertThat(storeA.renew(second).token()).isEqualTo(second.token());
    assertThat(storeA.renew(second).token()).isEqualTo(second.token());
  }

  @Test
  void renewAllAnswersEveryLeaseInOrder() {
    int perMulti = 250;
    int size = 2 * perMulti + 50;
    // Live leases scattered through the batch; the rest are gone. Renewed twice: read, then
    // watched.
    Set<Integer> live = Set.of(0, perMulti - 1, perMulti, 2 * perMulti - 1, 2 * perMulti, size - 1);
    int takenOver = perMulti + 1;
    int foreign = perMulti + 2;
    List<Lease> batch = new ArrayList<>(size);
    Lease granted = null;
    for (int i = 0; i < size; i++) {
      if (live.contains(i) || i == takenOver) {
        granted = granted(storeA.tryAcquire(uniqueElection("batch-" + i), "a", TTL));
        batch.add(granted);
      } else {
        batch.add(null);
      }
    }
    storeA.release(batch.get(takenOver));
    granted(storeB.tryAcquire(batch.get(takenOver).election(), "b", TTL));
    for (int i = 0; i < size; i++) {
      if (batch.get(i) == null) {
        // Of this store and session, but its node never existed: as good as a released lease.
        String handle = i == foreign ? "row-7" : granted.handle();
        batch.set(
            i,
            new Lease(
                uniqueElection("batch-gone-" + i), "a", granted.token(), granted.ttl(), handle));
      }
    }

    for (int round = 0; round < 2; round++) {
      assertEveryOutcome(storeA.renewAll(batch), batch, live, takenOver, foreign);
    }
    assertThat(storeA.renewBatchLimit()).isGreaterThanOrEqualTo(size);
    assertThat(storeA.read(batch.get(0).election())).map(LeaseRecord::holder).contains("a");
  }

  private static void assertEveryOutcome(
      List<Renewal> outcomes, List<Lease> batch, Set<Integer> live, int takenOver, int foreign) {
    int size = batch.size();
    assertThat(outcomes).hasSameSizeAs(batch);
    for (int i = 0; i < size; i++) {
      Renewal outcome = outcomes.get(i);
      Lease asked = batch.get(i);
      if (live.contains(i)) {
        assertThat(outcome.lease())
            .as("outcome %d", i)
            .hasValueSatisfying(l -> assertThat(l.token()).isEqualTo(asked.token()));
        assertThat(outcome.lease().orElseThrow().election()).isEqualTo(asked.election());
      } else if (i == takenOver) {
        assertThat(outcome.failure())
            .as("outcome %d", i)
            .hasValueSatisfying(
                e ->
                    assertThat(e)
                        .isInstanceOfSatisfying(
                            LeaseLostException.class,
                            lost -> assertThat(lost.holder()).contains("b")));
      } else if (i == foreign) {
        assertThat(outcome.failure())
            .as("outcome %d", i)
            .containsInstanceOf(IllegalArgumentException.class);
      } else {
        assertThat(outcome.failure())
            .as("outcome %d", i)
            .hasValueSatisfying(
                e ->
                    assertThat(e)
                        .isInstanceOfSatisfying(
                            LeaseLostException.class, lost -> assertThat(lost.holder()).isEmpty()));
      }
    }
  }

  @Test
  void leasesKeptRenewedByRenewAllOutliveTheirTtlAndAreNotGivenBack() {
    Lease one = granted(storeA.tryAcquire(uniqueElection("batch-kept-1"), "a", TTL));
    Lease two = granted(storeA.tryAcquire(uniqueElection("batch-kept-2"), "a", TTL));
    List<Lease> leases = List.of(one, two);

    // The store gives back a lease that went unrenewed for its TTL: renewals by batch count as
    // renewals.
    await()
        .during(one.ttl().plusSeconds(1))
        .atMost(one.ttl().plus(PATIENCE))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> storeA.renewAll(leases).stream().allMatch(Renewal::isRenewed));

    held(storeB.tryAcquire(one.election(), "b", TTL));
    held(storeB.tryAcquire(two.election(), "b", TTL));
  }

  @Test
  void releaseLetsTheNextCandidateInAtOnce() {
    String election = uniqueElection("release");
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    held(storeB.tryAcquire(election, "b", TTL));

    storeA.release(lease);

    assertThat(storeA.read(election)).isEmpty();
    assertThat(granted(storeB.tryAcquire(election, "b", TTL)).candidate()).isEqualTo("b");
  }

  @Test
  void aReleaseHandsTheLeaseToTheFirstFollowerInLineWithoutAWriteOfItsOwn() throws Exception {
    String election = uniqueElection("handover");
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    Subscription following = storeB.follow(election, "b", () -> {}).orElseThrow();
    held(storeB.tryAcquire(election, "b", TTL)); // takes its place in line

    long before = probeZxid();
    storeA.release(lease);
    Lease next = granted(storeB.tryAcquire(election, "b", TTL));
    long after = probeZxid();

    // Every write is one transaction, numbered in order: between the probes only the release.
    assertThat(after - before - 1).as("transactions from the release to the next grant").isOne();
    assertThat(next.token().isNewerThan(lease.token()))
        .as("%s after %s", next.token(), lease.token())
        .isTrue();
    assertThat(storeA.read(election).orElseThrow())
        .satisfies(
            r -> assertThat(List.of(r.holder(), r.token())).containsExactly("b", next.token()));
    assertThatThrownBy(() -> storeA.renew(lease)).isInstanceOf(LeaseLostException.class);
    following.close();
    assertThat(storeB.renew(next).token())
        .as("a lease outlives the follower's subscription")
        .isEqualTo(next.token());
  }

  @Test
  void aCandidateInLineLeavesItWhenItStopsFollowingOrDoesNotFollow() throws Exception {
    String election = uniqueElection("leave-line");
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    Subscription following = storeB.follow(election, "b", () -> {}).orElseThrow();
    held(storeB.tryAcquire(election, "b", TTL));
    assertThat(inLine(election)).as("holder and follower").hasSize(2);

    // A refused attempt without following leaves no place behind. Its first, where the store has
    // not seen the line yet, joins and leaves; after that it takes no place at all: one
    // transaction that changes nothing (so that its read sees every release acknowledged before),
    // so that candidates that poll (rather than follow) cannot keep each other out with places
    // they are about to give up.
    ZooKeeperLeaseStore other = store(perTest.client(server.getConnectString(), SESSION));
    assertThat(held(other.tryAcquire(election, "c", TTL)).holder()).isEqualTo("a");
    assertThat(inLine(election)).as("after a first refused attempt without following").hasSize(2);
    long before = probeZxid();
    assertThat(held(other.tryAcquire(election, "c", TTL)).holder()).isEqualTo("a");
    long after = probeZxid();
    assertThat(after - before - 1).as("transactions of a refused attempt").isOne();
    assertThat(inLine(election)).as("after a refused attempt without following").hasSize(2);

    following.close();
    await().atMost(PATIENCE).until(() -> inLine(election).size() == 1);
    storeA.release(lease);
    assertThat(storeA.read(election)).isEmpty();
  }

  @Test
  void aReleaseTellsTheNextInLineFirstAndThoseBehindItOnlyAfterItsHeadStart() throws Exception {
    String election = uniqueElection("head-start");
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    List<Long> toldB = new CopyOnWriteArrayList<>();
    List<Long> toldC = new CopyOnWriteArrayList<>();
    storeB.follow(election, "b", () -> toldB.add(System.nanoTime())).orElseThrow();
    held(storeB.tryAcquire(election, "b", TTL));
    ZooKeeperLeaseStore storeC = store(perTest.client(server.getConnectString(), SESSION));
    storeC.follow(election, "c", () -> toldC.add(System.nanoTime())).orElseThrow();
    held(storeC.tryAcquire(election, "c", TTL)); // third in line
    // Told of c's own join, which b was told of too.
    await().atMost(PATIENCE).until(() -> !toldC.isEmpty() && !toldB.isEmpty());

    long released = System.nanoTime();
    storeA.release(lease);
    await().atMost(PATIENCE).until(() -> toldB.stream().anyMatch(t -> t - released > 0));
    assertThat(granted(storeB.tryAcquire(election, "b", TTL)).candidate()).isEqualTo("b");
    long toldCAfter =
        await()
            .atMost(PATIENCE)
            .until(
                () -> toldC.stream().filter(t -> t - released > 0).findFirst(),
                java.util.Optional::isPresent)
            .orElseThrow();

    // Not a timing goal: a lower bound that the head start itself sets, however busy the machine.
    assertThat(Duration.ofNanos(toldCAfter - released))
        .as("from the release until the follower third in line was told")
        .isGreaterThanOrEqualTo(Duration.ofMillis(10));
    assertThat(held(storeC.tryAcquire(election, "c", TTL)).holder()).isEqualTo("b");
  }

  @Test
  void aFollowerFirstInLineThatNeverTriesIsGivenBackAfterItsTtl() throws Exception {
    String election = uniqueElection("unclaimed");
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    storeB.follow(election, "b", () -> {}).orElseThrow();
    held(storeB.tryAcquire(election, "b", TTL));

    // A stuck follower: its session and watch live on, but it never tries again.
    long released = System.nanoTime();
    storeA.release(lease);
    ZooKeeperLeaseStore other = store(perTest.client(server.getConnectString(), SESSION));
    assertThat(held(other.tryAcquire(election, "c", TTL)).holder()).isEqualTo("b");
    Lease next =
        await()
            .atMost(PATIENCE)
            .until(() -> other.tryAcquire(election, "c", TTL), Acquisition::isGranted)
            .lease()
            .orElseThrow();

    assertThat(Duration.ofNanos(System.nanoTime() - released))
        .as("time until another candidate was granted")
        .isGreaterThanOrEqualTo(SESSION);
    assertThat(next.token().isNewerThan(lease.token())).isTrue();
    assertThat(held(storeB.tryAcquire(election, "b", TTL)).holder()).isEqualTo("c");
  }

  @Test
  void theHoldersOwnAcquireIsRefusedAndAHandoverToAFollowerKeepsTokensRising() {
    String election = uniqueElection("term-then-handover");
    Lease first = granted(storeA.tryAcquire(election, "a", TTL));
    storeB.follow(election, "b", () -> {}).orElseThrow();
    held(storeB.tryAcquire(election, "b", TTL));

    // A live lease is never granted again, not even to its holder's id.
    LeaseRecord own = held(storeA.tryAcquire(election, "a", TTL));
    assertThat(List.of(own.holder(), own.token())).containsExactly("a", first.token());
    storeA.release(first);
    Lease next = granted(storeB.tryAcquire(election, "b", TTL));

    assertThat(next.token().isNewerThan(first.token()))
        .as("%s after %s", next.token(), first.token())
        .isTrue();
    assertHolder(election, "b", next.token());
    assertThat(held(storeB.tryAcquire(election, "b", TTL)).token()).isEqualTo(next.token());
    storeB.release(next);
    Lease again = granted(storeB.tryAcquire(election, "b", TTL));
    assertThat(again.token().isNewerThan(next.token())).isTrue();
    assertThatThrownBy(() -> storeB.renew(next)).isInstanceOf(LeaseLostException.class);
    assertHolder(election, "b", again.token());
  }

  @Test
  void aNewTermWhoseWriteNeverArrivedIsNotGrantedAgainWithTheOldToken() {
    FaultProxy link = proxyToServer();
    ZooKeeperLeaseStore holder = storeWithShortCallsThrough(link);
    String election = uniqueElection("lost-term-write");
    Lease first = granted(holder.tryAcquire(election, "a", TTL)); // on a read of the new line
    holder.renew(first);

    // The new term's write is dropped on the way: it never applies, and the call cannot tell.
    link.blackhole();
    assertThatThrownBy(() -> holder.tryAcquire(election, "a", TTL))
        .isInstanceOf(LeaseStoreException.class);
    link.heal();
    Lease next =
        await()
            .atMost(PATIENCE)
            .ignoreException(LeaseStoreException.class)
            .until(() -> holder.tryAcquire(election, "a", TTL), Acquisition::isGranted)
            .lease()
            .orElseThrow();

    assertThat(next.token().isNewerThan(first.token()))
        .as("%s after %s", next.token(), first.token())
        .isTrue();
  }

  @Test
  void aNewTermConfirmedTooLateHoldsTheElectionUntilTheTermBeforeItCouldRunOut() {
    FaultProxy link = proxyToServer();
    ZooKeeperLeaseStore holder = storeWithShortCallsThrough(link);
    String election = uniqueElection("late-term");
    Lease first = granted(holder.tryAcquire(election, "a", TTL));
    long confirmed = System.nanoTime();
    holder.renew(first);

    // The new term's write applies, but its answer comes only after the call gave up. Its elector
    // may still be stopping the earlier term's work: the election must stay held until that term
    // could have run out, not be handed on when the late answer arrives.
    link.stopReadingAnswers();
    assertThatThrownBy(() -> holder.tryAcquire(election, "a", TTL))
        .isInstanceOf(LeaseStoreException.class);
    link.heal();
    Lease next =
        await()
            .atMost(PATIENCE)
            .until(() -> storeB.tryAcquire(election, "b", TTL), Acquisition::isGranted)
            .lease()
            .orElseThrow();

    assertThat(Duration.ofNanos(System.nanoTime() - confirmed))
        .as("time until another candidate was granted")
        .isGreaterThanOrEqualTo(first.ttl());
    assertThat(next.token().isNewerThan(first.token())).isTrue();
  }

  /**
   * A create whose answer was lost (CONNECTIONLOSS) may still have made the candidate's node; when
   * the client then leaves that session (Curator gives a session up that stayed disconnected for
   * its timeout) while the servers keep it (they were restarted, and count its timeout afresh), the
   * node stays first in line under a session the store no longer has. That node is the store's own
   * dead leftover, and must not keep the candidate's own acquire out until the servers expire that
   * session. Seen in the conformance suite's outage scenario on ZooKeeper.
   */
  @Test
  void aNodeOfTheCandidateLeftFirstInLineByASessionTheStoreHasLeftDoesNotKeepItsOwnAcquireOut()
      throws Exception {
    FaultProxy link = proxyToServer();
    CuratorFramework cutClient = perTest.client("127.0.0.1:" + link.port(), SHORT_SESSION);
    ZooKeeperLeaseStore store = store(cutClient);
    AtomicBoolean sessionGivenUp = new AtomicBoolean();
    cutClient
        .getConnectionStateListenable()
        .addListener((c, state) -> sessionGivenUp.compareAndSet(false, state == LOST));
    String election = uniqueElection("left-by-a-session");
    String electionPath = store.nodes(election).electionPath();
    cutClient.create().creatingParentsIfNeeded().forPath(electionPath);
    ZooKeeper before = cutClient.getZookeeperClient().getZooKeeper();
    long leftSession = before.getSessionId();
    byte[] password = before.getSessionPasswd();
    store.release(granted(store.tryAcquire(uniqueElection("in-that-session"), "a", TTL)));

    // The client is cut off; the server keeps its session alive, as the restarted servers did,
    // because another handle (not through the link) attaches to it. Curator gives the session up
    // once it has been disconnected for its timeout, then opens a new one after the heal.
    link.cut();
    ZooKeeper lost =
        new ZooKeeper(
            server.getConnectString(),
            (int) SHORT_SESSION.toMillis(),
            e -> {},
            leftSession,
            password);
    perTest.closeLater(lost::close);
    await().atMost(PATIENCE).until(() -> lost.getState().isConnected());
    await().atMost(PATIENCE).untilTrue(sessionGivenUp);
    link.heal();
    await()
        .atMost(PATIENCE)
        .until(
            () ->
                cutClient.getZookeeperClient().isConnected()
                    && cutClient.getZookeeperClient().getZooKeeper().getSessionId() != leftSession);
    // Made as the lost create made it: the candidate's id in a line node of that session.
    String left =
        lost.create(
            electionPath + "/c-",
            bytes("a"),
            org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
            org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL);

    Lease lease = granted(store.tryAcquire(election, "a", TTL));

    assertThat(lease.candidate()).isEqualTo("a");
    assertThat(cutClient.checkExists().forPath(left)).as("the node left in line").isNull();
    assertThat(held(storeB.tryAcquire(election, "b", TTL)).token()).isEqualTo(lease.token());
  }

  /**
   * Two processes started with one candidate id have two sessions: the second's acquire must not
   * take the first's node for a leftover of its own, but be refused, naming the id.
   */
  @Test
  void oneCandidateIdInAnotherSessionIsRefusedWhileTheFirstHoldsTheElection() {
    String election = uniqueElection("same-id");
    Lease first = granted(storeA.tryAcquire(election, "twin", TTL));

    LeaseRecord holder = held(storeB.tryAcquire(election, "twin", TTL));

    assertThat(List.of(holder.holder(), holder.token())).containsExactly("twin", first.token());
    assertThat(storeA.renew(first).token()).as("the first's renewal").isEqualTo(first.token());
    storeA.release(first);
    assertThat(granted(storeB.tryAcquire(election, "twin", TTL)).token().isNewerThan(first.token()))
        .isTrue();
  }

  @Test
  void anElectionHeldByTheLeaseNodeOfAnEarlierReleaseIsNotTaken() throws Exception {
    String election = uniqueElection("earlier-release");
    String electionPath = storeA.nodes(election).electionPath();
    clientA.create().creatingParentsIfNeeded().forPath(electionPath);
    // What a candidate of a release before the line holds: one fixed ephemeral node.
    clientA
        .create()
        .withMode(org.apache.zookeeper.CreateMode.EPHEMERAL)
        .forPath(electionPath + "/lease", bytes("old"));

    assertThat(held(storeB.tryAcquire(election, "b", TTL)).holder()).isEqualTo("old");
    assertThat(storeB.read(election).orElseThrow().holder()).isEqualTo("old");

    clientA.delete().forPath(electionPath + "/lease");
    assertThat(granted(storeB.tryAcquire(election, "b", TTL)).candidate()).isEqualTo("b");
  }

  @Test
  void releasingAStaleLeaseNeverRemovesTheCurrentOne() {
    String election = uniqueElection("stale-release");
    Lease stale = granted(storeA.tryAcquire(election, "a", TTL));
    storeA.release(stale);
    Lease successor = granted(storeB.tryAcquire(election, "b", TTL));

    storeA.release(stale);
    assertThat(storeB.renew(successor).token()).isEqualTo(successor.token());

    // The same for an earlier term of the candidate that holds the election now.
    storeB.release(successor);
    Lease next = granted(storeB.tryAcquire(election, "b", TTL));
    storeB.release(successor);
    assertThat(storeB.renew(next).token()).isEqualTo(next.token());
    assertThat(storeA.read(election).orElseThrow().holder()).isEqualTo("b");
  }

  @Test
  void readShowsTheHolderAndIsEmptyWhenNobodyHoldsTheElection() {
    String election = uniqueElection("read");
    assertThat(storeB.read(election)).isEmpty();

    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    LeaseRecord record = storeB.read(election).orElseThrow();

    assertThat(record.election()).isEqualTo(election);
    assertThat(record.holder()).isEqualTo("a");
    assertThat(record.token()).isEqualTo(lease.token());
    assertThat(record.ttl()).isEqualTo(lease.ttl());
    storeA.release(lease);
    assertThat(storeB.read(election)).isEmpty();
  }

  @Test
  void candidatesSharingOneSessionAreToldApartByTheirIds() {
    String election = uniqueElection("shared-session");
    ZooKeeperLeaseStore sameSession = store(clientA);

    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    LeaseRecord holder = held(sameSession.tryAcquire(election, "a2", TTL));

    assertThat(holder.holder()).isEqualTo("a");
    assertThat(storeA.renew(lease).token()).isEqualTo(lease.token());
    sameSession.release(lease); // any store of the session may give it back
    assertThat(granted(sameSession.tryAcquire(election, "a2", TTL)).candidate()).isEqualTo("a2");
  }

  @Test
  void manyElectionsShareOneSession() throws Exception {
    String first = uniqueElection("many-1");
    String second = uniqueElection("many-2");
    Lease one = granted(storeA.tryAcquire(first, "a", TTL));
    // Read after the first grant: before it the client may not be connected, and has no session.
    long session = clientA.getZookeeperClient().getZooKeeper().getSessionId();
    Lease two = granted(storeA.tryAcquire(second, "a", TTL));
    storeA.release(one);

    assertThat(storeA.renew(two).token()).isEqualTo(two.token());
    assertThat(LeaseHandle.of(one).sessionId())
        .isEqualTo(session)
        .isEqualTo(LeaseHandle.of(two).sessionId());
  }

  @Test
  void anExpiredSessionEndsTheLeaseAsTheServerJudgesIt() throws Exception {
    String election = uniqueElection("expiry");
    CuratorFramework shortLived = perTest.client(server.getConnectString(), SHORT_SESSION);
    ZooKeeperLeaseStore holderStore = store(shortLived);
    Lease lease = granted(holderStore.tryAcquire(election, "a", SHORT_SESSION));
    held(storeB.tryAcquire(election, "b", TTL));

    // The client drops its connection without closing the session: the server expires it.
    KillSession.kill(shortLived.getZookeeperClient().getZooKeeper());

    Lease successor =
        await()
            .atMost(PATIENCE)
            .until(() -> storeB.tryAcquire(election, "b", TTL), Acquisition::isGranted)
            .lease()
            .orElseThrow();
    assertThat(successor.token().isNewerThan(lease.token())).isTrue();
    await()
        .atMost(PATIENCE)
        .ignoreException(LeaseStoreException.class)
        .untilAsserted(
            () ->
                assertThatThrownBy(() -> holderStore.renew(lease))
                    .isInstanceOf(LeaseLostException.class));
  }

  /**
   * A client cut off until the servers expired its session learns that only when it reconnects (or
   * when Curator gives the session up): calls queued on the old handle meanwhile fail with
   * SESSIONEXPIRED. A call that is not tied to a lease's session must go on in the new session.
   */
  @Test
  void callsThatDoNotBelongToASessionGoOnInTheNextSessionWhenTheirsHasExpired() throws Exception {
    String election = uniqueElection("after-expiry");
    String other = uniqueElection("after-expiry-other");
    FaultProxy link = proxyToServer();
    CuratorFramework cutClient = perTest.client("127.0.0.1:" + link.port(), SHORT_SESSION);
    ZooKeeperLeaseStore cut = store(cutClient);
    Lease lease = granted(cut.tryAcquire(election, "a", SHORT_SESSION));
    Lease otherLease = granted(cut.tryAcquire(other, "a", SHORT_SESSION));
    ZooKeeper expiring = cutClient.getZookeeperClient().getZooKeeper();

    link.cut();
    await().atMost(PATIENCE).until(() -> storeB.read(election).isEmpty());
    link.heal();

    Lease again = granted(cut.tryAcquire(election, "a", SHORT_SESSION));
    assertThat(again.token().isNewerThan(lease.token())).isTrue();
    assertThat(cut.read(other)).as("read after the session expired").isEmpty();
    cut.release(otherLease);
    assertThat(cutClient.getZookeeperClient().getZooKeeper()).isNotSameAs(expiring);
    assertThatThrownBy(() -> cut.renew(lease)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void aLeaseItsHolderStopsRenewingIsGivenBackAfterItsTtlWhileItsSessionLives() throws Exception {
    String election = uniqueElection("unrenewed");
    long started = System.nanoTime();
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    long session = clientA.getZookeeperClient().getZooKeeper().getSessionId();

    // A stuck elector: its client keeps the session alive, but nobody renews the lease.
    Lease successor =
        await()
            .atMost(PATIENCE)
            .until(() -> storeB.tryAcquire(election, "b", TTL), Acquisition::isGranted)
            .lease()
            .orElseThrow();

    assertThat(Duration.ofNanos(System.nanoTime() - started))
        .as("time until another candidate was granted")
        .isGreaterThanOrEqualTo(lease.ttl());
    assertThat(successor.token().isNewerThan(lease.token())).isTrue();
    assertThat(clientA.getZookeeperClient().getZooKeeper().getSessionId())
        .as("the holder's session")
        .isEqualTo(session);
    assertThatThrownBy(() -> storeA.renew(lease)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void closingTheHoldersClientFreesTheElection() {
    String election = uniqueElection("client-closed");
    granted(storeA.tryAcquire(election, "a", TTL));

    clientA.close();

    await()
        .atMost(PATIENCE)
        .until(() -> storeB.tryAcquire(election, "b", TTL), Acquisition::isGranted);
  }

  @Test
  void watchFiresWhenTheElectionIsGrantedAndReleased() {
    String election = uniqueElection("watch");
    AtomicInteger changes = new AtomicInteger();
    Subscription subscription = storeB.watch(election, changes::incrementAndGet).orElseThrow();
    assertThat(storeB.watchReportsExpiry()).isTrue();

    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));
    await().atMost(PATIENCE).untilAtomic(changes, greaterThanOrEqualTo(1));
    int afterGrant = changes.get();
    storeA.release(lease);
    await().atMost(PATIENCE).untilAtomic(changes, greaterThan(afterGrant));

    subscription.close();
  }

  @Test
  void watchFiresWhenTheHoldersSessionExpires() throws Exception {
    String election = uniqueElection("watch-expiry");
    CuratorFramework shortLived = perTest.client(server.getConnectString(), SHORT_SESSION);
    granted(store(shortLived).tryAcquire(election, "a", SHORT_SESSION));
    AtomicInteger changes = new AtomicInteger();
    storeB.watch(election, changes::incrementAndGet).orElseThrow();

    KillSession.kill(shortLived.getZookeeperClient().getZooKeeper());

    await().atMost(PATIENCE).untilAtomic(changes, greaterThanOrEqualTo(1));
    await().atMost(PATIENCE).until(() -> storeB.read(election).isEmpty());
  }

  @Test
  void watchIsCalledAfterAReconnectAndKeepsWorking() throws Exception {
    ZooKeeperServers own = new ZooKeeperServers();
    perTest.closeLater(own);
    TestingServer restarting = own.server();
    ZooKeeperLeaseStore watcher = store(perTest.client(restarting.getConnectString(), SESSION));
    ZooKeeperLeaseStore holderStore = store(perTest.client(restarting.getConnectString(), SESSION));
    String election = uniqueElection("watch-reconnect");
    AtomicInteger changes = new AtomicInteger();
    watcher.watch(election, changes::incrementAndGet).orElseThrow();

    restarting.restart();

    // Events may have been missed while disconnected, so the reconnect itself is reported.
    await().atMost(PATIENCE).untilAtomic(changes, greaterThanOrEqualTo(1));
    int afterReconnect = changes.get();
    Lease lease =
        await()
            .atMost(PATIENCE)
            .ignoreException(LeaseStoreException.class)
            .until(() -> holderStore.tryAcquire(election, "a", TTL), Acquisition::isGranted)
            .lease()
            .orElseThrow();
    await().atMost(PATIENCE).untilAtomic(changes, greaterThan(afterReconnect));
    int afterGrant = changes.get();
    holderStore.release(lease);
    await().atMost(PATIENCE).untilAtomic(changes, greaterThan(afterGrant));
  }

  @Test
  void aFollowerWhoseWatchSawTheReleaseButMissedTheNextGrantIsToldWhoHolds() throws Exception {
    FaultProxy link = proxyToServer();
    CuratorFramework followerClient = perTest.client("127.0.0.1:" + link.port(), SESSION);
    ZooKeeperLeaseStore follower = store(followerClient);
    String election = uniqueElection("missed-grant");
    Lease first = granted(storeA.tryAcquire(election, "a", TTL));
    AtomicInteger changes = new AtomicInteger();
    follower.watch(election, changes::incrementAndGet).orElseThrow();
    int beforeRelease = changes.get();
    storeA.release(first);
    await().atMost(PATIENCE).untilAtomic(changes, greaterThan(beforeRelease));

    // Cut off, the follower does not hear of the next grant: it still believes the election free.
    link.cut();
    await().atMost(PATIENCE).until(() -> !followerClient.getZookeeperClient().isConnected());
    Lease second = granted(storeA.tryAcquire(election, "a", TTL));
    link.heal();

    Acquisition answer =
        await()
            .atMost(PATIENCE)
            .ignoreException(LeaseStoreException.class)
            .until(() -> follower.tryAcquire(election, "b", TTL), a -> true);
    LeaseRecord holder = held(answer);
    assertThat(holder.holder()).isEqualTo("a");
    assertThat(holder.token()).isEqualTo(second.token());
  }

  @Test
  void aClosedWatchIsNotCalledAgain() {
    String election = uniqueElection("watch-closed");
    AtomicInteger closedWatch = new AtomicInteger();
    AtomicInteger openWatch = new AtomicInteger();
    storeB.watch(election, closedWatch::incrementAndGet).orElseThrow().close();
    storeB.watch(election, openWatch::incrementAndGet).orElseThrow();

    storeA.release(granted(storeA.tryAcquire(election, "a", TTL)));

    // Both watches see the same events in order: once the open one saw both, the closed one
    // would have seen them too.
    await().atMost(PATIENCE).untilAtomic(openWatch, greaterThanOrEqualTo(2));
    assertThat(closedWatch.get()).isZero();
  }

  @Test
  void guardedWritesApplyOnlyWhileTheLeaseIsCurrent() throws Exception {
    String election = uniqueElection("guarded");
    String resource = "/app/" + election;
    clientA.create().creatingParentsIfNeeded().forPath(resource, bytes("0"));
    Lease stale = granted(storeA.tryAcquire(election, "a", TTL));

    storeA.guarded(stale, List.of(setData(clientA, resource, "1")));
    assertThat(dataOf(resource)).isEqualTo("1");

    // Release and takeover: the new lease node has the same data version as the old one had.
    storeA.release(stale);
    Lease successor = granted(storeB.tryAcquire(election, "b", TTL));
    CuratorOp late = setData(clientA, resource, "stale");
    assertThatThrownBy(() -> storeA.guarded(stale, List.of(late)))
        .isInstanceOf(LeaseLostException.class);
    assertThat(dataOf(resource)).isEqualTo("1");

    storeB.guarded(successor, List.of(setData(clientB, resource, "2")));
    assertThat(dataOf(resource)).isEqualTo("2");
  }

  @Test
  void guardedWritesOfAnEarlierTermOfTheSameCandidateAreRefused() throws Exception {
    String election = uniqueElection("guarded-term");
    String resource = "/app/" + election;
    clientA.create().creatingParentsIfNeeded().forPath(resource, bytes("0"));
    Lease first = granted(storeA.tryAcquire(election, "a", TTL));
    storeA.release(first);
    Lease second = granted(storeA.tryAcquire(election, "a", TTL));

    CuratorOp late = setData(clientA, resource, "first");
    assertThatThrownBy(() -> storeA.guarded(first, List.of(late)))
        .isInstanceOf(LeaseLostException.class);
    storeA.guarded(second, List.of(setData(clientA, resource, "second")));
    assertThat(dataOf(resource)).isEqualTo("second");
  }

  @Test
  void aGuardedWriteAfterTheSessionExpiredIsRefused() throws Exception {
    String election = uniqueElection("guarded-expired");
    String resource = "/app/" + election;
    clientB.create().creatingParentsIfNeeded().forPath(resource, bytes("0"));
    CuratorFramework shortLived = perTest.client(server.getConnectString(), SHORT_SESSION);
    ZooKeeperLeaseStore holderStore = store(shortLived);
    Lease stale = granted(holderStore.tryAcquire(election, "a", SHORT_SESSION));

    KillSession.kill(shortLived.getZookeeperClient().getZooKeeper());
    await()
        .atMost(PATIENCE)
        .until(() -> storeB.tryAcquire(election, "b", TTL), Acquisition::isGranted);

    CuratorOp late = setData(shortLived, resource, "stale");
    await()
        .atMost(PATIENCE)
        .ignoreException(LeaseStoreException.class)
        .untilAsserted(
            () ->
                assertThatThrownBy(() -> holderStore.guarded(stale, List.of(late)))
                    .isInstanceOf(LeaseLostException.class));
    assertThat(dataOf(resource)).isEqualTo("0");
  }

  @Test
  void aGuardedWriteWhoseOwnOperationFailsReportsItAndAppliesNothing() throws Exception {
    String election = uniqueElection("guarded-own-failure");
    String resource = "/app/" + election;
    clientA.create().creatingParentsIfNeeded().forPath(resource, bytes("0"));
    Lease lease = granted(storeA.tryAcquire(election, "a", TTL));

    CuratorOp change = setData(clientA, resource, "1");
    CuratorOp duplicate = clientA.transactionOp().create().forPath(resource, bytes("again"));
    assertThatThrownBy(() -> storeA.guarded(lease, List.of(change, duplicate)))
        .isInstanceOfSatisfying(
            KeeperException.class,
            e -> {
              assertThat(e.code()).isEqualTo(KeeperException.Code.NODEEXISTS);
              assertThat(e.getPath()).isEqualTo(resource);
            });
    assertThat(dataOf(resource)).isEqualTo("0");
    assertThat(storeA.renew(lease).token()).isEqualTo(lease.token());
  }

  @Test
  void aTtlLongerThanTheSessionIsRefusedBecauseTheLeaseCouldNotLastThatLong() {
    String election = uniqueElection("ttl");

    assertThatThrownBy(() -> storeA.tryAcquire(election, "a", SESSION.plusSeconds(1)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("session timeout")
        .hasMessageContaining("election.zookeeper.session-timeout");
    assertThat(storeA.read(election)).isEmpty();
  }

  @Test
  void electionNamesThatCannotBeNodeNamesAreRefusedWithTheReason() {
    for (String name : List.of("", "a/b", "..", "bad\u0001name")) {
      assertThatThrownBy(() -> storeA.tryAcquire(name, "a", TTL))
          .as("election name '%s'", name)
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("election name '" + name + "'");
    }
  }

  @Test
  void electionNamesAreCheckedBeforeTheFirstCall() {
    storeA.checkElectionName("billing-cron");

    assertThatThrownBy(() -> storeA.checkElectionName("billing/cron"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election name 'billing/cron'")
        .hasMessageContaining("'/'");
  }

  @Test
  void aLeaseFromAnotherStoreIsRefusedWithTheHandleItCarried() {
    Lease foreign = new Lease("e", "a", FencingToken.of(1), TTL, "row-7");

    assertThatThrownBy(() -> storeA.renew(foreign))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'row-7'");
  }

  @Test
  void nodesLiveUnderTheBasePathAndTheClientsNamespace() throws Exception {
    String election = uniqueElection("namespace");
    CuratorFramework namespaced = clientA.usingNamespace("tenant");
    ZooKeeperLeaseStore store =
        ZooKeeperLeaseStore.builder(namespaced).basePath("/custom/leases").build();
    perTest.closeLater(store);

    Lease lease = granted(store.tryAcquire(election, "a", TTL));
    String node = "/tenant/custom/leases/" + election + "/" + LeaseHandle.of(lease).node();
    Stat stat = clientA.checkExists().forPath(node);

    assertThat(stat).isNotNull();
    assertThat(stat.getCzxid()).isEqualTo(lease.token().value());
    assertThat(stat.getEphemeralOwner())
        .isEqualTo(clientA.getZookeeperClient().getZooKeeper().getSessionId());
    assertThat(store.renew(lease).token()).isEqualTo(lease.token());
    store.release(lease);
    assertThat(clientA.checkExists().forPath(node)).isNull();
  }

  @Test
  void closingTheStoreLeavesTheCallersClientOpen() {
    String election = uniqueElection("owned");
    ZooKeeperLeaseStore store = store(clientA);

    store.close();

    assertThat(clientA.getState()).isEqualTo(CuratorFrameworkState.STARTED);
    assertThatThrownBy(() -> store.read(election))
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining("closed");
    assertThat(storeA.read(election)).isEmpty();
  }

  @Test
  void describeNamesTheBackendAndTheServers() {
    assertThat(storeA.describe()).isEqualTo("zookeeper (" + server.getConnectString() + ")");
  }

  @Test
  void aServerThatAnswersNothingFailsCallsWithinTheCallTimeout() throws Exception {
    try (Blackhole blackhole = new Blackhole()) {
      CuratorFramework client = perTest.client(blackhole.connectString(), SESSION);
      ZooKeeperLeaseStore store =
          ZooKeeperLeaseStore.builder(client).callTimeout(Duration.ofSeconds(1)).build();
      perTest.closeLater(store);

      assertTimeoutPreemptively(
          PATIENCE,
          () -> {
            assertThatThrownBy(() -> store.tryAcquire("e", "a", TTL))
                .isInstanceOf(LeaseStoreException.class);
            assertThatThrownBy(() -> store.read("e")).isInstanceOf(LeaseStoreException.class);
          });
    }
  }

  @Test
  void aServerThatWentAwayFailsRenewalsAsUnknownNotAsLost() throws Exception {
    ZooKeeperServers own = new ZooKeeperServers();
    perTest.closeLater(own);
    TestingServer doomed = own.server();
    CuratorFramework client = perTest.client(doomed.getConnectString(), SESSION);
    ZooKeeperLeaseStore store = store(client);
    String election = uniqueElection("server-gone");
    String otherElection = uniqueElection("server-gone-other");
    Lease lease = granted(store.tryAcquire(election, "a", TTL));
    Lease other = granted(store.tryAcquire(otherElection, "a", TTL));

    doomed.stop();

    assertTimeoutPreemptively(
        PATIENCE,
        () -> {
          assertThatThrownBy(() -> store.renew(lease)).isInstanceOf(LeaseStoreException.class);
          List<Renewal> batch = store.renewAll(List.of(lease, other));
          assertThat(batch.get(0).failure())
              .hasValueSatisfying(
                  e ->
                      assertThat(e)
                          .isExactlyInstanceOf(LeaseStoreException.class)
                          .hasMessageContaining("'" + election + "'"));
          assertThat(batch.get(1).failure())
              .hasValueSatisfying(
                  e ->
                      assertThat(e)
                          .isExactlyInstanceOf(LeaseStoreException.class)
                          .hasMessageContaining("'" + otherElection + "'"));
          assertThatThrownBy(() -> store.tryAcquire(election, "a", TTL))
              .isInstanceOf(LeaseStoreException.class);
          assertThatThrownBy(() -> store.release(lease)).isInstanceOf(LeaseStoreException.class);
        });
  }

  /**
   * A proxy in front of the server, for faults on one client's connection; closed after the test.
   */
  private FaultProxy proxyToServer() {
    FaultProxy link =
        FaultProxy.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort()));
    perTest.closeLater(link);
    return link;
  }

  /**
   * A store on its own session through {@code link}, whose calls give up after 500 ms: a fault of
   * the link costs a test half a second, far below the session's timeout.
   */
  private ZooKeeperLeaseStore storeWithShortCallsThrough(FaultProxy link) {
    ZooKeeperLeaseStore store =
        ZooKeeperLeaseStore.builder(perTest.client("127.0.0.1:" + link.port(), SESSION))
            .callTimeout(Duration.ofMillis(500))
            .build();
    perTest.closeLater(store);
    return store;
  }

  /** The candidates' nodes under the election node, as another session reads them. */
  private List<String> inLine(String election) throws Exception {
    return clientA.getChildren().forPath(storeA.nodes(election).electionPath());
  }

  private void assertHolder(String election, String holder, FencingToken token) {
    assertThat(storeA.read(election))
        .hasValueSatisfying(
            r -> assertThat(List.of(r.holder(), r.token())).containsExactly(holder, token));
  }

  /** The zxid of a write made now: the server numbers transactions one after another. */
  private long probeZxid() throws Exception {
    String probe =
        clientA
            .create()
            .creatingParentsIfNeeded()
            .withMode(org.apache.zookeeper.CreateMode.PERSISTENT_SEQUENTIAL)
            .forPath("/probes/p-");
    return clientA.checkExists().forPath(probe).getCzxid();
  }

  private static CuratorOp setData(CuratorFramework client, String path, String value)
      throws Exception {
    return client.transactionOp().setData().forPath(path, bytes(value));
  }

  private String dataOf(String path) throws Exception {
    return new String(clientB.getData().forPath(path), UTF_8);
  }

  private static byte[] bytes(String value) {
    return value.getBytes(UTF_8);
  }

  /** Accepts connections on loopback and never answers: a server that hangs. */
  private static final class Blackhole implements AutoCloseable {
    private final ServerSocket socket;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    Blackhole() throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      acceptor = new Thread(this::accept, "blackhole-acceptor");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    private void accept() {
      while (!socket.isClosed()) {
        try {
          accepted.add(socket.accept());
        } catch (IOException e) {
          return; // closed
        }
      }
    }

    String connectString() {
      return "127.0.0.1:" + socket.getLocalPort();
    }

    @Override
    public void close() throws Exception {
      socket.close();
      for (Socket s : accepted) {
        s.close();
      }
      acceptor.join(5_000);
    }
  }
}
