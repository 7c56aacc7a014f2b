package dev.baton.zookeeper;

import static dev.baton.zookeeper.ZooKeeperServers.uniqueElection;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStoreException;
import dev.baton.testservers.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A lease on a three-member ensemble while members die. Each test kills a member, so each gets a
 * fresh ensemble.
 */
class ZooKeeperEnsembleIT {

  private static final int TICK_MILLIS = 500;

  /** The longest session the members grant (20 ticks): room to find another member. */
  private static final Duration SESSION = Duration.ofMillis(20L * TICK_MILLIS);

  private static final Duration TTL = Duration.ofSeconds(5);

  private ZooKeeperServers resources;
  private ZooKeeperEnsemble ensemble;
  private TestingCluster cluster;
  private CuratorFramework holderClient;
  private ZooKeeperLeaseStore holder;
  private ZooKeeperLeaseStore other;

  @BeforeEach
  void startEnsemble() throws Exception {
    resources = new ZooKeeperServers();
    ensemble = ZooKeeperEnsemble.start(TICK_MILLIS);
    resources.closeLater(ensemble);
    cluster = ensemble.cluster();
    holderClient = resources.client(cluster.getConnectString(), SESSION);
    holder = store(holderClient);
    other = store(resources.client(cluster.getConnectString(), SESSION));
  }

  @AfterEach
  void stopEnsemble() {
    resources.close();
  }

  private ZooKeeperLeaseStore store(CuratorFramework client) {
    ZooKeeperLeaseStore store =
        ZooKeeperLeaseStore.builder(client).callTimeout(Duration.ofSeconds(2)).build();
    resources.closeLater(store);
    return store;
  }

  @Test
  void killingAFollowerTheHolderIsNotConnectedToDisturbsNoRenewal() throws Exception {
    String election = uniqueElection("follower-killed");
    Lease lease = acquireOnceTheEnsembleServes(election);
    InstanceSpec connected = cluster.findConnectionInstance(zk());
    InstanceSpec bystander =
        cluster.getInstances().stream()
            .filter(i -> !i.equals(connected) && "follower".equals(ZooKeeperEnsemble.mode(i)))
            .findFirst()
            .orElseThrow(
                () -> new AssertionError("no follower other than " + connected + ": " + modes()));

    assertThat(cluster.killServer(bystander)).isTrue();

    for (int i = 0; i < 5; i++) {
      assertThat(holder.renew(lease).token()).isEqualTo(lease.token());
    }
    assertThat(currentHolder(election)).isEqualTo(new Holder("a", lease.token().value()));
  }

  @Test
  void killingTheMemberTheHolderIsConnectedToMovesTheSessionAndKeepsTheTerm() throws Exception {
    String election = uniqueElection("connected-killed");
    Lease lease = acquireOnceTheEnsembleServes(election);
    long session = zk().getSessionId();
    InstanceSpec connected = cluster.findConnectionInstance(zk());

    assertThat(cluster.killServer(connected)).isTrue();

    // Renewals fail as "unknown" while the client looks for another member; a LeaseLostException
    // would end the wait and fail the test.
    await()
        .atMost(SESSION)
        .ignoreException(LeaseStoreException.class)
        .until(() -> holder.renew(lease).token().equals(lease.token()));
    assertThat(zk().getSessionId()).isEqualTo(session);
    assertThat(cluster.findConnectionInstance(zk())).isNotEqualTo(connected);
    assertThat(currentHolder(election)).isEqualTo(new Holder("a", lease.token().value()));
  }

  @Test
  void killingTheQuorumLeaderKeepsTheTermOnceAnotherLeaderIsElected() throws Exception {
    String election = uniqueElection("leader-killed");
    Lease lease = acquireOnceTheEnsembleServes(election);
    long session = zk().getSessionId();
    InstanceSpec leader = memberIn("leader");

    assertThat(cluster.killServer(leader)).isTrue();

    await()
        .atMost(SESSION)
        .ignoreException(LeaseStoreException.class)
        .until(() -> holder.renew(lease).token().equals(lease.token()));
    assertThat(zk().getSessionId()).isEqualTo(session);
    assertThat(currentHolder(election)).isEqualTo(new Holder("a", lease.token().value()));
  }

  /**
   * The quorum leader sends a commit to its followers before applying it itself, so a follower can
   * acknowledge a release while the leader still shows the lease: a campaign or a read through the
   * leader that trusted a synced read would call the election held. Many rounds, because the window
   * is the leader applying one commit.
   */
  @Test
  void aCandidateOnTheQuorumLeaderSeesAReleaseAFollowerHasAcknowledged() throws Exception {
    String election = uniqueElection("release-through-follower");
    holder.release(acquireOnceTheEnsembleServes(election));
    InstanceSpec leader = memberIn("leader");
    InstanceSpec follower = memberIn("follower");
    ZooKeeperLeaseStore onFollower = store(resources.client(follower.getConnectString(), SESSION));
    ZooKeeperLeaseStore onLeader = store(resources.client(leader.getConnectString(), SESSION));

    for (int round = 0; round < 500; round++) {
      Lease released =
          granted(
              onFollower.tryAcquire(election, "f", TTL), "the follower's client in round " + round);
      onFollower.release(released);
      assertThat(onLeader.read(election))
          .as("read through the quorum leader after release %d", round)
          .isEmpty();
      Lease taken =
          granted(onLeader.tryAcquire(election, "l", TTL), "the leader's client in round " + round);
      assertThat(taken.token()).isGreaterThan(released.token());
      onLeader.release(taken);
    }
  }

  private static Lease granted(Acquisition acquisition, String who) {
    return acquisition
        .lease()
        .orElseThrow(
            () -> new AssertionError(who + " was refused a released lease: " + acquisition));
  }

  private InstanceSpec memberIn(String mode) {
    return cluster.getInstances().stream()
        .filter(i -> mode.equals(ZooKeeperEnsemble.mode(i)))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + mode + ": " + modes()));
  }

  private Lease acquireOnceTheEnsembleServes(String election) {
    return await()
        .atMost(SESSION)
        .ignoreException(LeaseStoreException.class)
        .until(() -> holder.tryAcquire(election, "a", TTL), Acquisition::isGranted)
        .lease()
        .orElseThrow();
  }

  private record Holder(String candidate, long token) {}

  /** The holder as another candidate is refused with it, once that candidate reaches a member. */
  private Holder currentHolder(String election) {
    Acquisition refused =
        await()
            .atMost(SESSION)
            .ignoreException(LeaseStoreException.class)
            .until(() -> other.tryAcquire(election, "b", TTL), a -> true);
    LeaseRecord record =
        refused.holder().orElseThrow(() -> new AssertionError("granted to b: " + refused));
    return new Holder(record.holder(), record.token().value());
  }

  private ZooKeeper zk() throws Exception {
    return holderClient.getZookeeperClient().getZooKeeper();
  }

  private Map<Integer, String> modes() {
    return ensemble.modes();
  }
}
