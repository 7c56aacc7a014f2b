package dev.baton.zookeeper;

import static dev.baton.zookeeper.ZooKeeperServers.uniqueElection;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FaultProxy;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.testservers.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease on a three-member ensemble one of whose followers is cut off from the quorum while its
 * clients still reach it, and a candidate on that member whose host is suspended meanwhile. Such a
 * member goes on answering reads and pings from its own tree until it has not heard from the quorum
 * leader for {@code syncLimit} ticks, while the quorum expires the sessions of its clients (their
 * pings no longer reach the quorum leader) and grants their leases to others. The suspended
 * candidate's monotonic clock stands still (Linux's {@code CLOCK_MONOTONIC} does not count a
 * suspension, nor a paused virtual machine), so nothing on its side has run out when it resumes.
 * Anything the store decided from that member's answers alone would be decided on a tree the quorum
 * has left behind; each test checks that no such decision grants or keeps a lease.
 */
class ZooKeeperMemberCutOffIT {

  private static final Logger log = LoggerFactory.getLogger(ZooKeeperMemberCutOffIT.class);
  private static final int TICK_MILLIS = 500;

  /**
   * 30 s of answering its clients after the cut: long beyond a session, so that each test acts
   * while the member still serves, however busy the machine.
   */
  private static final int SYNC_LIMIT = 60;

  /** The session timeout, and so the lease: four ticks. */
  private static final Duration SESSION = Duration.ofSeconds(2);

  private static final Duration PATIENCE = Duration.ofSeconds(20);

  private final ZooKeeperServers resources = new ZooKeeperServers();
  private final List<FaultProxy> quorumLinks = new ArrayList<>();
  private ZooKeeperEnsemble ensemble;
  private InstanceSpec cutOff;
  private InstanceSpec inQuorum;

  @BeforeEach
  void startEnsemble() {
    ensemble =
        ZooKeeperEnsemble.startWithFirstMemberRouted(
            TICK_MILLIS,
            SYNC_LIMIT,
            quorumAddress -> {
              FaultProxy link = FaultProxy.start(quorumAddress);
              resources.closeLater(link);
              quorumLinks.add(link);
              return link.address();
            });
    resources.closeLater(ensemble);
    List<InstanceSpec> members = List.copyOf(ensemble.cluster().getInstances());
    cutOff = members.get(0);
    inQuorum = members.get(1);
  }

  @AfterEach
  void stopEnsemble() {
    resources.close();
  }

  /**
   * The follower's read after a release, which the elector makes when its watch fires, taken when
   * the quorum has already expired the follower's session and granted the next in line: the cut off
   * member still shows the follower first. The store sends a {@code sync} with that read, which
   * only the quorum leader answers.
   */
  @Test
  void aFollowerOnAMemberCutOffFromTheQuorumIsNotGrantedWhatTheQuorumGaveTheNextInLine() {
    String election = uniqueElection("follower-cut-off");
    ZooKeeperLeaseStore leaderStore = storeOn(inQuorum, MonotonicClock.system());
    SuspendableClock followerClock = new SuspendableClock();
    ZooKeeperLeaseStore followerStore = storeOn(cutOff, followerClock);
    ZooKeeperLeaseStore nextStore = storeOn(inQuorum, MonotonicClock.system());

    Lease lease = grantedOnceTheEnsembleServes(leaderStore, election, "leader");
    waitInLine(followerStore, election, "follower");
    waitInLine(nextStore, election, "next");

    // The member to be cut off has applied the release: the follower is first in its tree, and it
    // has told the follower so (its elector would try now).
    leaderStore.release(lease);
    CuratorFramework onCutOff = resources.client(cutOff.getConnectString(), SESSION);
    String electionPath = ZooKeeperLeaseStore.DEFAULT_BASE_PATH + "/" + election;
    await("until the member to be cut off shows the follower and the next in line alone")
        .atMost(PATIENCE)
        .until(() -> onCutOff.getChildren().forPath(electionPath).size() == 2);
    // Suspended before it tries: its store's timer that would give an unclaimed turn back does not
    // come due either.
    followerClock.suspend();
    cutOffFromTheQuorum();

    // The quorum hears nothing more of the follower: its session expires, and the next in line is
    // granted.
    Lease next = grantedOnceTheEnsembleServes(nextStore, election, "next");

    followerClock.resume();
    Acquisition late = attempt(() -> followerStore.tryAcquire(election, "follower", SESSION));
    assertStillServing();
    assertThat(late)
        .as(
            "the follower's try on the cut off member, after the quorum granted term %s to next",
            next.token())
        .satisfiesAnyOf(
            refused -> assertThat(refused).isNull(),
            refused -> assertThat(refused.isGranted()).isFalse());
  }

  /**
   * The leader's renewal taken when the quorum has already expired its session and granted the
   * lease to another: the cut off member still answers the leader's pings and shows its lease node.
   * A renewal is a {@code sync}, which only the quorum leader answers, so it fails.
   */
  @Test
  void aLeaderOnAMemberCutOffFromTheQuorumCannotRenewOnceTheQuorumGrantedAnother() {
    String election = uniqueElection("leader-cut-off");
    SuspendableClock leaderClock = new SuspendableClock();
    ZooKeeperLeaseStore leaderStore = storeOn(cutOff, leaderClock);
    ZooKeeperLeaseStore nextStore = storeOn(inQuorum, MonotonicClock.system());

    Lease lease = grantedOnceTheEnsembleServes(leaderStore, election, "leader");
    waitInLine(nextStore, election, "next");
    Lease renewed = leaderStore.renew(lease); // read and watched: later renewals are a sync alone
    // Suspended right after a renewal: on resuming, its lease has not run out by its own clock.
    leaderClock.suspend();
    cutOffFromTheQuorum();

    Lease next = grantedOnceTheEnsembleServes(nextStore, election, "next");

    leaderClock.resume();
    Lease late = attempt(() -> leaderStore.renew(renewed));
    assertStillServing();
    assertThat(late)
        .as(
            "the leader's renewal on the cut off member, after the quorum granted term %s to next",
            next.token())
        .isNull();
  }

  /** Follows the election and tries once, which the holder refuses: a place in line. */
  private static void waitInLine(ZooKeeperLeaseStore store, String election, String candidate) {
    store.follow(election, candidate, () -> {}).orElseThrow();
    assertThat(store.tryAcquire(election, candidate, SESSION).isGranted())
        .as("%s's first try", candidate)
        .isFalse();
  }

  private void cutOffFromTheQuorum() {
    assertStillServing();
    quorumLinks.forEach(FaultProxy::blackhole);
  }

  /**
   * The cut off member still follows, so it answered from its own tree: had it gone looking for a
   * quorum, it would have dropped its clients, and the test would prove nothing.
   */
  private void assertStillServing() {
    assertThat(ZooKeeperEnsemble.mode(cutOff))
        .as("the cut off member's role (the members: %s)", ensemble.modes())
        .isEqualTo("follower");
  }

  /**
   * What the call returned, or null when it failed as the lease contract has it fail: the store
   * could not answer, or the lease is lost.
   */
  private static <T> T attempt(Supplier<T> call) {
    try {
      return call.get();
    } catch (LeaseStoreException | LeaseLostException e) {
      log.info("refused as it should be: {}", e.toString());
      return null;
    }
  }

  private static Lease grantedOnceTheEnsembleServes(
      ZooKeeperLeaseStore store, String election, String candidate) {
    return await("until " + candidate + " is granted " + election)
        .atMost(PATIENCE)
        .ignoreException(LeaseStoreException.class)
        .until(() -> store.tryAcquire(election, candidate, SESSION), Acquisition::isGranted)
        .lease()
        .orElseThrow();
  }

  /**
   * A store whose client knows only {@code member}, and so never moves to another, and whose store
   * measures time by {@code clock}.
   */
  private ZooKeeperLeaseStore storeOn(InstanceSpec member, MonotonicClock clock) {
    CuratorFramework client =
        resources.started(ZooKeeperServers.pinnedClient(member.getConnectString(), SESSION));
    ZooKeeperLeaseStore store =
        ZooKeeperLeaseStore.builder(client).callTimeout(Duration.ofSeconds(1)).clock(clock).build();
    resources.closeLater(store);
    return store;
  }

  /**
   * The monotonic clock of a host that can be suspended: it stands still from {@link #suspend} to
   * {@link #resume}, and then goes on from where it stood.
   */
  private static final class SuspendableClock implements MonotonicClock {
    private long suspendedNanos;
    private long suspendedAt;
    private boolean suspended;

    @Override
    public synchronized long nanoTime() {
      return (suspended ? suspendedAt : System.nanoTime()) - suspendedNanos;
    }

    synchronized void suspend() {
      suspendedAt = System.nanoTime();
      suspended = true;
    }

    synchronized void resume() {
      suspendedNanos += System.nanoTime() - suspendedAt;
      suspended = false;
    }
  }
}
