package dev.baton.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Subscription;
import dev.baton.testservers.EtcdCluster;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a Baton leader on etcd sees when members of the etcd cluster die and come back: a follower
 * member killed, the raft leader member killed, a member restarted. The lease (15 s) must outlive
 * each event with its term (token) intact.
 */
class EtcdMemberFailureIT extends EtcdClusterIT {

  private static final Logger log = LoggerFactory.getLogger(EtcdMemberFailureIT.class);
  private static final Duration TTL = Duration.ofSeconds(15);
  private static final Duration CALL_TIMEOUT = EtcdLeaseStore.DEFAULT_CALL_TIMEOUT;

  /** What a call may overrun its timeout by: scheduling on a busy machine, not etcd. */
  private static final Duration SLACK = Duration.ofSeconds(1);

  @BeforeAll
  static void startThreeMembers() {
    startCluster(3, b -> b);
  }

  @BeforeEach
  void allMembersRunning() {
    // Every test leaves all members running; earlier tests may have changed the raft leader.
    etcd.members().stream().filter(m -> !m.isRunning()).forEach(etcd::restart);
    etcd.awaitHealthy(Duration.ofSeconds(30));
  }

  /**
   * One renewal, checked for what must always hold: it returns or fails within the call timeout,
   * and it never reports the lease lost. Returns whether it succeeded.
   */
  private static boolean renewWithinCallTimeout(EtcdLeaseStore store, Lease lease) {
    long started = System.nanoTime();
    try {
      assertThat(store.renew(lease).token()).isEqualTo(lease.token());
      return true;
    } catch (LeaseStoreException e) {
      log.info("renewal failed, the engine would retry until its deadline: {}", e.getMessage());
      return false;
    } catch (LeaseLostException e) {
      throw new AssertionError(
          "the lease was lost, but it should have outlived the member failure", e);
    } finally {
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .as("renewal time")
          .isLessThanOrEqualTo(CALL_TIMEOUT.plus(SLACK));
    }
  }

  @Test
  void aFollowerMemberKilledCostsNoLeadership() {
    EtcdLeaseStore store = store(client);
    Lease lease = granted(store.tryAcquire(election, "a", TTL));
    EtcdCluster.Member follower = etcd.follower();

    etcd.kill(follower);

    // The client may have been talking to the killed member; at most a retry later it is not.
    await()
        .atMost(TTL)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> renewWithinCallTimeout(store, lease));
    for (int i = 0; i < 5; i++) {
      assertThat(store.renew(lease).token()).isEqualTo(lease.token());
    }
    assertThat(store.read(election).orElseThrow().token()).isEqualTo(lease.token());
  }

  @Test
  void theRaftLeaderMemberKilledKeepsTheTermWhenARenewalGetsThroughWithinTheLease()
      throws Exception {
    // A lease of its own (the default): every renewal below must reach etcd, none may ride on an
    // earlier one.
    EtcdLeaseStore store = EtcdLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
    toClose.add(store);
    Lease lease = granted(store.tryAcquire(election, "a", TTL));
    store.renew(lease);
    long lastRenewalStarted = System.nanoTime();
    EtcdCluster.Member leader = etcd.awaitLeader(Duration.ofSeconds(10));

    long killed = System.nanoTime();
    etcd.kill(leader);
    // A write (a new election's transaction) at the same moment, to see how long writes stall.
    CompletableFuture<Long> firstWrite =
        CompletableFuture.supplyAsync(
            () -> {
              EtcdLeaseStore writer = EtcdLeaseStore.builder(client).build();
              try {
                await()
                    .atMost(TTL)
                    .pollInterval(Duration.ofMillis(100))
                    .ignoreExceptionsInstanceOf(LeaseStoreException.class)
                    .until(() -> writer.tryAcquire(election + "-write", "w", TTL).isGranted());
                return System.nanoTime();
              } finally {
                writer.close();
              }
            });

    AtomicInteger failedRenewals = new AtomicInteger();
    AtomicLong renewedAt = new AtomicLong();
    await()
        .atMost(TTL)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              long started = System.nanoTime();
              if (renewWithinCallTimeout(store, lease)) {
                renewedAt.set(System.nanoTime());
                return true;
              }
              failedRenewals.incrementAndGet();
              return false;
            });
    long wroteAt = firstWrite.get(TTL.toSeconds() + 10, TimeUnit.SECONDS);
    log.info(
        "raft leader {} killed: the first renewal got through {} ms after the kill ({} renewals failed before it),"
            + " the first write {} ms after it; new leader {}",
        leader,
        (renewedAt.get() - killed) / 1_000_000,
        failedRenewals.get(),
        (wroteAt - killed) / 1_000_000,
        etcd.awaitLeader(Duration.ofSeconds(10)));

    assertThat(Duration.ofNanos(renewedAt.get() - lastRenewalStarted))
        .as("renewed within the lease")
        .isLessThan(lease.ttl());
    assertThat(lease.ttl()).isEqualTo(TTL);
    for (int i = 0; i < 3; i++) {
      assertThat(store.renew(lease).token()).isEqualTo(lease.token());
    }
    assertThat(store.tryAcquire(election, "b", TTL).isGranted()).isFalse();
  }

  @Test
  void aMemberRestartedCatchesUpAndServesTheSameHolder() throws Exception {
    EtcdLeaseStore store = store(client);
    Lease lease = granted(store.tryAcquire(election, "a", TTL));
    EtcdCluster.Member member = etcd.follower();
    etcd.kill(member);
    await()
        .atMost(TTL)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> renewWithinCallTimeout(store, lease));

    etcd.restart(member);

    try (Client onlyRestarted = Client.builder().endpoints(member.endpoint()).build()) {
      EtcdLeaseStore viaRestarted = EtcdLeaseStore.builder(onlyRestarted).build();
      await()
          .atMost(Duration.ofSeconds(10))
          .ignoreExceptionsInstanceOf(LeaseStoreException.class)
          .until(
              () ->
                  viaRestarted
                      .read(election)
                      .map(r -> r.token().equals(lease.token()))
                      .orElse(false));
      assertThat(viaRestarted.tryAcquire(election, "b", TTL).isGranted()).isFalse();
      viaRestarted.close();
    }
    for (int i = 0; i < 3; i++) {
      assertThat(store.renew(lease).token()).isEqualTo(lease.token());
    }
  }

  @Test
  void aWatchOnAKilledMemberCallsBackAndWatchesAgainWhenItReturns() throws Exception {
    EtcdLeaseStore store = store(client);
    EtcdCluster.Member member = etcd.follower();
    try (Client onlyThisMember = Client.builder().endpoints(member.endpoint()).build()) {
      EtcdLeaseStore follower = EtcdLeaseStore.builder(onlyThisMember).build();
      AtomicInteger changes = new AtomicInteger();
      Subscription watch = follower.watch(election, changes::incrementAndGet).orElseThrow();
      // Once etcd confirms the watch, the follower is told to look (it may have missed something).
      await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 1);
      Lease a = granted(store.tryAcquire(election, "a", TTL));
      await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 2);

      int beforeKill = changes.get();
      etcd.kill(member);
      // The broken watch is reported once: events may have been missed.
      await().atMost(Duration.ofSeconds(10)).until(() -> changes.get() > beforeKill);

      etcd.restart(member);
      store.release(a);
      int afterRelease = changes.get();
      granted(store.tryAcquire(election, "b", TTL));
      // Re-established from the last revision it saw: the changes while it was away arrive.
      await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() > afterRelease);
      assertThat(follower.read(election).orElseThrow().holder()).isEqualTo("b");
      watch.close();
      follower.close();
    }
  }

  @Test
  void aRenewalOnAClosedStoreIsAStoreError() {
    EtcdLeaseStore store = EtcdLeaseStore.builder(client).build();
    Lease lease = granted(store.tryAcquire(election, "a", TTL));
    store.close();

    assertThatThrownBy(() -> store.renew(lease))
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining("closed");
    EtcdLeaseStore other = store(client);
    // Closing revoked the store's etcd leases, so the election is free at once.
    assertThat(other.tryAcquire(election, "b", TTL).isGranted()).isTrue();
  }
}
