package dev.baton.zookeeper;

import static dev.baton.zookeeper.ZooKeeperServers.uniqueElection;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FaultProxy;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The first call after the client's session was replaced, made at the worst moment: the session
 * expired while the link was cut, Curator opened a new handle, and that handle's first connection
 * attempt has failed, so the ZooKeeper client waits a second or two before its next one.
 */
class ZooKeeperSessionReplacedIT {

  private static final Duration SESSION = Duration.ofSeconds(2);

  /**
   * Shorter than the ZooKeeper client's pause between two connection attempts (one second, plus up
   * to one more at random), so that a call that waits for that pause fails every time.
   */
  private static final Duration CALL_TIMEOUT = Duration.ofMillis(900);

  private static final Duration PATIENCE = Duration.ofSeconds(20);

  private static ZooKeeperServers servers;
  private static TestingServer server;

  private ZooKeeperServers perTest;

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
  void open() {
    perTest = new ZooKeeperServers();
  }

  @AfterEach
  void close() {
    perTest.close();
  }

  @Test
  void theFirstCallAfterTheSessionWasReplacedWhileTheLinkWasCutIsAnsweredWithinItsCallTimeout() {
    String election = uniqueElection("replaced");
    FaultProxy link =
        FaultProxy.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort()));
    perTest.closeLater(link);
    CuratorFramework client = perTest.client("127.0.0.1:" + link.port(), SESSION);
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    ZooKeeperLeaseStore store =
        ZooKeeperLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
    perTest.closeLater(store);
    ZooKeeperLeaseStore other =
        ZooKeeperLeaseStore.builder(perTest.client(server.getConnectString(), SESSION)).build();
    perTest.closeLater(other);
    Lease lease = granted(store.tryAcquire(election, "a", SESSION));

    link.cut();
    await().atMost(PATIENCE).until(() -> other.read(election).isEmpty());
    // Curator gives the session up after its timeout without an answer (LOST) and opens a new
    // handle. Each refused attempt of that handle is followed by a pause of one to two seconds:
    // the heal comes right at the start of one.
    await().atMost(PATIENCE).until(() -> states.contains(ConnectionState.LOST));
    long attempts = link.connectionsAccepted();
    await().atMost(PATIENCE).until(() -> link.connectionsAccepted() > attempts);
    link.heal();

    Lease again = granted(store.tryAcquire(election, "a", SESSION));

    assertThat(again.token().isNewerThan(lease.token())).isTrue();
  }

  private static Lease granted(Acquisition acquisition) {
    assertThat(acquisition.isGranted()).as("granted: %s", acquisition).isTrue();
    return acquisition.lease().orElseThrow();
  }
}
