package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.baton.election.Acquisition;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.testservers.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * With authentication on and a 2 s auth token TTL, a leader keeps its lease across many token
 * lifetimes: the store gets past "invalid auth token" by authenticating again within the call.
 */
class EtcdAuthIT {

  private static final int TOKEN_TTL_SECONDS = 2;
  private static final String USER = "root";
  private static final String PASSWORD = "s3cret-for-tests";
  private static final Duration TTL = Duration.ofSeconds(15);

  private static EtcdCluster etcd;

  @BeforeAll
  static void startClusterWithAuth() throws Exception {
    EtcdCluster.requireBinary();
    etcd =
        EtcdCluster.start(
            3, "--auth-token", "simple", "--auth-token-ttl", Integer.toString(TOKEN_TTL_SECONDS));
    try (Client admin = Client.builder().endpoints(etcd.endpoints()).build()) {
      admin.getAuthClient().userAdd(bytes(USER), bytes(PASSWORD)).get(10, TimeUnit.SECONDS);
      admin.getAuthClient().roleAdd(bytes(USER)).get(10, TimeUnit.SECONDS);
      admin.getAuthClient().userGrantRole(bytes(USER), bytes(USER)).get(10, TimeUnit.SECONDS);
      admin.getAuthClient().authEnable().get(10, TimeUnit.SECONDS);
    }
  }

  @AfterAll
  static void stopCluster() {
    if (etcd != null) {
      etcd.close();
    }
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, UTF_8);
  }

  private static Client authenticated(int jetcdRetries) {
    return Client.builder()
        .endpoints(etcd.endpoints())
        .user(bytes(USER))
        .password(bytes(PASSWORD))
        .retryMaxAttempts(jetcdRetries)
        .build();
  }

  private static Lease granted(Acquisition acquisition) {
    assertThat(acquisition.isGranted()).as("granted: %s", acquisition).isTrue();
    return acquisition.lease().orElseThrow();
  }

  @Test
  void aLeaderKeepsItsLeaseAcrossManyAuthTokenLifetimes() {
    // jetcd's default retries, and none at all: then only the store's own retry gets past the
    // expired token.
    try (Client withRetries = authenticated(2);
        Client withoutRetries = authenticated(0);
        EtcdLeaseStore first = EtcdLeaseStore.builder(withRetries).build();
        EtcdLeaseStore second = EtcdLeaseStore.builder(withoutRetries).build()) {
      String election = "auth-" + System.nanoTime();
      Lease one = granted(first.tryAcquire(election + "-1", "a", TTL));
      Lease two = granted(second.tryAcquire(election + "-2", "a", TTL));
      ByteSequence data = bytes("/baton-test/auth/" + election);

      List<Throwable> failures = new CopyOnWriteArrayList<>();
      List<Long> renewed = new CopyOnWriteArrayList<>();
      ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor();
      try {
        // Renew less often than the token lives, so that every renewal meets an expired token.
        renewer.scheduleWithFixedDelay(
            () -> {
              try {
                assertThat(first.renew(one).token()).isEqualTo(one.token());
                assertThat(second.renew(two).token()).isEqualTo(two.token());
                second.guarded(
                    two,
                    List.of(Op.put(data, bytes("renewal " + renewed.size()), PutOption.DEFAULT)));
                assertThat(first.read(election + "-2").orElseThrow().token())
                    .isEqualTo(two.token());
                renewed.add(System.nanoTime());
              } catch (RuntimeException | AssertionError e) {
                failures.add(e);
              }
            },
            TOKEN_TTL_SECONDS * 1500L,
            TOKEN_TTL_SECONDS * 1500L,
            TimeUnit.MILLISECONDS);

        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> renewed.size() >= 5 || !failures.isEmpty());
      } finally {
        renewer.shutdownNow();
      }

      assertThat(failures).isEmpty();
      assertThat(renewed).hasSizeGreaterThanOrEqualTo(5);
    }
  }

  @Test
  void theProviderAuthenticatesWithUsernameAndPassword() {
    Properties properties = new Properties();
    properties.setProperty(ElectionProperties.BACKEND, "etcd");
    properties.setProperty(EtcdLeaseStoreProvider.ENDPOINTS, etcd.endpointList());
    properties.setProperty(EtcdLeaseStoreProvider.USERNAME, USER);
    properties.setProperty(EtcdLeaseStoreProvider.PASSWORD, PASSWORD);
    try (LeaseStore store = ElectionProperties.of(properties).openStore()) {
      String election = "provider-auth-" + System.nanoTime();
      Lease lease = granted(store.tryAcquire(election, "a", TTL));
      assertThat(store.renew(lease).token()).isEqualTo(lease.token());
      assertThat(store.describe()).doesNotContain(PASSWORD);
      store.release(lease);
    }
  }

  @Test
  void aWrongPasswordIsAStoreErrorNotAHang() {
    try (Client wrong =
            Client.builder()
                .endpoints(etcd.endpoints())
                .user(bytes(USER))
                .password(bytes("not-the-password-42"))
                .build();
        EtcdLeaseStore store =
            EtcdLeaseStore.builder(wrong).callTimeout(Duration.ofSeconds(2)).build()) {
      assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () ->
              assertThatThrownBy(
                      () -> store.tryAcquire("wrong-password-" + System.nanoTime(), "a", TTL))
                  .isInstanceOf(LeaseStoreException.class)
                  .hasMessageNotContaining("not-the-password-42"));
    }
  }
}
