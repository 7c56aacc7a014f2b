package dev.baton.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.net.HostAndPort;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.testservers.ConsulServers;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.Consul;
import org.kiwiproject.consul.model.session.SessionInfo;

/** What the Consul store does in Consul's own terms, on a dev agent. */
class ConsulLeaseStoreIT {

  private static final Duration TTL = Duration.ofSeconds(2);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);

  private static ConsulServers consul;
  private static Consul client;

  @BeforeAll
  static void start() {
    consul = ConsulServers.dev();
    client =
        ConsulLeaseStoreProvider.client(
            List.of(HostAndPort.fromParts("127.0.0.1", consul.agent(0).httpAddress().getPort())),
            null,
            CALL_TIMEOUT);
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.destroy();
    }
    if (consul != null) {
      consul.close();
    }
  }

  private static ConsulLeaseStore store() {
    return ConsulLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
  }

  @Test
  void tokensKeepGrowingAfterTheKeyIsDeletedWhereLockIndexStartsOver() {
    try (ConsulLeaseStore store = store()) {
      Lease first = store.tryAcquire("fencing", "a", TTL).lease().orElseThrow();
      store.release(first);
      client.keyValueClient().deleteKey(ConsulLeaseStore.DEFAULT_PREFIX + "fencing");
      Lease second = store.tryAcquire("fencing", "b", TTL).lease().orElseThrow();

      assertThat(second.token().isNewerThan(first.token())).isTrue();
      assertThat(
              client
                  .keyValueClient()
                  .getValue(ConsulLeaseStore.DEFAULT_PREFIX + "fencing")
                  .orElseThrow()
                  .getLockIndex())
          .as("Consul's LockIndex, which a token based on it would repeat")
          .isEqualTo(1);
    }
  }

  @Test
  void electionsOfOneStoreShareOneSessionWithReleaseBehaviourNoLockDelayAndNoChecks() {
    try (ConsulLeaseStore store = store()) {
      Lease a = store.tryAcquire("shared-a", "me", TTL).lease().orElseThrow();
      Lease b = store.tryAcquire("shared-b", "me", TTL).lease().orElseThrow();

      assertThat(b.handle()).isEqualTo(a.handle());
      SessionInfo session = client.sessionClient().getSessionInfo(a.handle()).orElseThrow();
      assertThat(session.getBehavior()).isEqualTo("release");
      assertThat(session.getLockDelay()).isZero();
      assertThat(session.getTtl()).contains("2000ms");
      assertThat(session.getChecks()).isEmpty();
    }
  }

  @Test
  void aReleaseWakesTheWatchAndTheNextCandidateIsGrantedAtOnce() {
    try (ConsulLeaseStore leader = store();
        ConsulLeaseStore follower = store()) {
      Lease lease = leader.tryAcquire("handover", "leader", TTL).lease().orElseThrow();
      assertThat(follower.tryAcquire("handover", "follower", TTL).isGranted()).isFalse();
      AtomicInteger changes = new AtomicInteger();
      try (var watch = follower.watch("handover", changes::incrementAndGet).orElseThrow()) {
        Awaitility.await("the watch's first answer").until(() -> changes.get() >= 1);
        int before = changes.get();
        leader.release(lease);
        Awaitility.await("the release reported")
            .atMost(Duration.ofMillis(500))
            .until(() -> changes.get() > before);
        Acquisition next = follower.tryAcquire("handover", "follower", TTL);
        assertThat(next.isGranted()).isTrue();
        assertThat(next.lease().orElseThrow().token().isNewerThan(lease.token())).isTrue();
      }
    }
  }

  @Test
  void aStoppedRenewerLosesTheKeyWhenConsulInvalidatesTheSessionAndRenewSaysSo() {
    try (ConsulLeaseStore gone = store();
        ConsulLeaseStore other = store()) {
      Lease lease = gone.tryAcquire("expiry", "gone", TTL).lease().orElseThrow();
      // Consul invalidates a session between one and about two TTLs after its last renewal.
      Awaitility.await("the key unlocked by Consul")
          .atMost(TTL.multipliedBy(2).plusSeconds(2))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> other.read("expiry").isEmpty());
      assertThat(other.tryAcquire("expiry", "other", TTL).isGranted()).isTrue();
      assertThatThrownBy(() -> gone.renew(lease)).isInstanceOf(LeaseLostException.class);
    }
  }

  @Test
  void closingTheStoreUnlocksEveryKeyItHolds() {
    ConsulLeaseStore closing = store();
    closing.tryAcquire("close-a", "me", TTL).lease().orElseThrow();
    closing.tryAcquire("close-b", "me", TTL).lease().orElseThrow();
    closing.close();
    try (ConsulLeaseStore other = store()) {
      assertThat(other.read("close-a")).isEmpty();
      assertThat(other.read("close-b")).isEmpty();
      assertThat(other.tryAcquire("close-a", "other", TTL).isGranted()).isTrue();
    }
  }
}
