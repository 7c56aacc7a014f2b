package dev.baton.zookeeper;

import static dev.baton.zookeeper.ZooKeeperServers.uniqueElection;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.baton.election.Acquisition;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Stores opened from properties, as an application deploying the jar gets them. */
class ZooKeeperLeaseStoreProviderIT {

  private static final Duration TTL = Duration.ofSeconds(2);
  private static final Duration PATIENCE = Duration.ofSeconds(20);

  private static ZooKeeperServers servers;
  private static TestingServer server;

  @BeforeAll
  static void startServer() {
    servers = new ZooKeeperServers();
    server = servers.server();
  }

  @AfterAll
  static void stopServer() {
    servers.close();
  }

  private static LeaseStore open(String... extraKeysAndValues) {
    Properties p = new Properties();
    p.setProperty("election.zookeeper.connect-string", server.getConnectString());
    p.setProperty("election.zookeeper.session-timeout", "4s");
    p.setProperty("election.zookeeper.call-timeout", "2s");
    for (int i = 0; i < extraKeysAndValues.length; i += 2) {
      p.setProperty(extraKeysAndValues[i], extraKeysAndValues[i + 1]);
    }
    return ElectionProperties.of(p).openStore();
  }

  private static Lease granted(Acquisition acquisition) {
    assertThat(acquisition.isGranted()).as("granted: %s", acquisition).isTrue();
    return acquisition.lease().orElseThrow();
  }

  @Test
  void theOnlyBackendOnTheClasspathIsFoundAndItsStoreWorks() {
    String election = uniqueElection("provider");
    try (LeaseStore store = open();
        LeaseStore other = open("election.backend", "zookeeper")) {
      assertThat(store).isInstanceOf(ZooKeeperLeaseStore.class);
      assertThat(store.describe()).isEqualTo("zookeeper (" + server.getConnectString() + ")");

      Lease lease = granted(store.tryAcquire(election, "a", TTL));
      assertThat(other.tryAcquire(election, "b", TTL).holder().orElseThrow().holder())
          .isEqualTo("a");
      assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(4));
      store.release(lease);
      assertThat(granted(other.tryAcquire(election, "b", TTL)).candidate()).isEqualTo("b");
    }
  }

  @Test
  void closingTheStoreClosesTheClientItBuiltAndEndsItsLeases() {
    String election = uniqueElection("provider-close");
    try (LeaseStore other = open()) {
      LeaseStore store = open();
      granted(store.tryAcquire(election, "a", TTL));

      store.close();

      assertThatThrownBy(() -> store.read(election)).isInstanceOf(LeaseStoreException.class);
      await().atMost(PATIENCE).until(() -> other.read(election).isEmpty());
    }
  }

  @Test
  void withADigestTheNodesBelongToThoseCredentials() throws Exception {
    String election = uniqueElection("digest");
    String base = "/secured-" + election;
    try (LeaseStore store =
            open("election.zookeeper.digest", "baton:right", "election.zookeeper.base-path", base);
        LeaseStore colleague =
            open("election.zookeeper.digest", "baton:right", "election.zookeeper.base-path", base);
        LeaseStore stranger =
            open(
                "election.zookeeper.digest", "baton:wrong", "election.zookeeper.base-path", base)) {
      Lease lease = granted(store.tryAcquire(election, "a", TTL));

      CuratorFramework anonymous =
          servers.started(
              CuratorFrameworkFactory.newClient(
                  server.getConnectString(), 4_000, 4_000, new RetryOneTime(100)));
      CuratorFramework owner =
          servers.started(
              CuratorFrameworkFactory.builder()
                  .connectString(server.getConnectString())
                  .sessionTimeoutMs(4_000)
                  .connectionTimeoutMs(4_000)
                  .retryPolicy(new RetryOneTime(100))
                  .authorization("digest", "baton:right".getBytes(UTF_8))
                  .build());
      String leaseNode = base + "/" + election + "/" + LeaseHandle.of(lease).node();
      assertThatThrownBy(() -> anonymous.getACL().forPath(leaseNode))
          .isInstanceOf(KeeperException.NoAuthException.class);
      List<ACL> acl = owner.getACL().forPath(leaseNode);
      assertThat(acl).hasSize(1);
      assertThat(acl.get(0).getId().getScheme()).isEqualTo("digest");
      assertThat(acl.get(0).getPerms()).isEqualTo(ZooDefs.Perms.ALL);
      assertThatThrownBy(() -> anonymous.getData().forPath(leaseNode))
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> anonymous.delete().forPath(leaseNode))
          .isInstanceOf(KeeperException.NoAuthException.class);

      assertThat(colleague.tryAcquire(election, "b", TTL).holder().orElseThrow().holder())
          .isEqualTo("a");
      assertThatThrownBy(() -> stranger.tryAcquire(election, "c", TTL))
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining("NOAUTH")
          .hasMessageContaining("election.zookeeper.digest")
          .hasMessageNotContaining("right")
          .hasMessageNotContaining("wrong");

      store.release(lease);
      assertThat(colleague.read(election)).isEmpty();
      assertThat(granted(colleague.tryAcquire(election, "b", TTL)).candidate()).isEqualTo("b");
    }
  }
}
