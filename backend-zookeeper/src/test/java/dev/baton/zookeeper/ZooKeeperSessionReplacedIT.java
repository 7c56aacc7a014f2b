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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The first call after the client's session was replaced, made at the worst moment: while the
 * ZooKeeper client waits a second or two after a refused connection attempt before the next one.
 */
class ZooKeeperSessionReplacedIT {

  private static final Duration SESSION = Duration.ofSeconds(2);

  /**
   * Shorter than the ZooKeeper client's pause between two connection attempts (one second, plus up
   * to one more at random), so that a call that waits for that pause fails every time.
   */
  private static final Duration CALL_TIMEOUT = Duration.ofMillis(900);

  private static final Duration PATIENCE = Duration.ofSeconds(20);

  private final ZooKeeperServers servers = new ZooKeeperServers();
  private TestingServer server;
  private FaultProxy link;
  private CuratorFramework client;
  private ZooKeeperLeaseStore store;

  /**
   * A server, and a store whose client reaches it only through a proxy that a test can cut. The
   * election node is made beforehand by a client of its own, so that the store's first grant is one
   * round trip, well within the short call timeout on a loaded machine.
   */
  private void open(Duration session, String election) throws Exception {
    server = servers.server();
    link =
        FaultProxy.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort()));
    servers.closeLater(link);
    client = servers.client("127.0.0.1:" + link.port(), session);
    store = ZooKeeperLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
    servers.closeLater(store);
    servers
        .client(server.getConnectString(), session)
        .create()
        .creatingParentsIfNeeded()
        .forPath(store.nodes(election).electionPath());
  }

  @AfterEach
  void close() {
    servers.close();
  }

  @Test
  void theFirstCallAfterTheSessionWasReplacedWhileTheLinkWasCutIsAnsweredWithinItsCallTimeout()
      throws Exception {
    String election = uniqueElection("replaced");
    open(SESSION, election);
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    ZooKeeperLeaseStore other =
        ZooKeeperLeaseStore.builder(servers.client(server.getConnectString(), SESSION)).build();
    servers.closeLater(other);
    Lease lease = store.tryAcquire(election, "a", SESSION).lease().orElseThrow();

    link.cut();
    await().atMost(PATIENCE).until(() -> other.read(election).isEmpty());
    // Curator gives the session up after its timeout without an answer (LOST) and opens a new
    // handle. Each refused attempt of that handle is followed by a pause of one to two seconds:
    // the heal comes right at the start of one.
    await().atMost(PATIENCE).until(() -> states.contains(ConnectionState.LOST));
    long attempts = link.connectionsAccepted();
    await().atMost(PATIENCE).until(() -> link.connectionsAccepted() > attempts);
    link.heal();

    Acquisition again = store.tryAcquire(election, "a", SESSION);

    assertThat(again.isGranted()).as("granted: %s", again).isTrue();
    assertThat(again.lease().orElseThrow().token().isNewerThan(lease.token())).isTrue();
  }
}
