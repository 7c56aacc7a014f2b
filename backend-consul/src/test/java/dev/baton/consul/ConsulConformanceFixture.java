package dev.baton.consul;

import com.google.common.net.HostAndPort;
import dev.baton.conformance.ProxiedServerFixture;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.testservers.ConsulServers;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.kiwiproject.consul.Consul;

/**
 * The conformance suite's view of Consul: one server, or a three-server cluster, on loopback with
 * their data on disk, and one client per node that reaches every server only through that node's
 * own fault proxies. A server outage kills every server (SIGKILL) and the restore starts them again
 * on the same ports and data.
 */
final class ConsulConformanceFixture extends ProxiedServerFixture {

  /**
   * The suite's default timings, with Consul's extra time after a crash in the allowance: Consul
   * invalidates a session up to twice its TTL after its last renewal (it arms its timer for twice
   * the TTL), so a crashed holder's key is unlocked up to one lease later than the contract's
   * bound. That lease is Consul's, not the machine's slowness.
   */
  static final Timings TIMINGS =
      Timings.SHORT.withAllowance(Timings.SHORT.allowance().plus(Timings.SHORT.leaseDuration()));

  /** About a third of the 2 s renew deadline. */
  static final Duration CALL_TIMEOUT = Duration.ofMillis(700);

  private final int size;
  private final List<LeaseStore> stores = new CopyOnWriteArrayList<>();
  private ConsulServers consul;

  ConsulConformanceFixture(int size) {
    this.size = size;
  }

  @Override
  protected List<InetSocketAddress> startServers() {
    consul = ConsulServers.start(size);
    return consul.httpAddresses();
  }

  @Override
  protected LeaseStore openStore(String node, List<InetSocketAddress> through) {
    List<HostAndPort> servers =
        through.stream().map(a -> HostAndPort.fromParts("127.0.0.1", a.getPort())).toList();
    Consul client = ConsulLeaseStoreProvider.client(servers, null, CALL_TIMEOUT);
    closeLater(client::destroy);
    LeaseStore store =
        ConsulLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).sessionName(node).build();
    stores.add(store);
    return store;
  }

  @Override
  protected void stopServers() {
    if (consul != null) {
      consul.close();
    }
  }

  @Override
  public Timings timings() {
    return TIMINGS;
  }

  @Override
  public boolean canWatch() {
    return true;
  }

  @Override
  public boolean canDeleteLeases() {
    return true;
  }

  /**
   * Deletes the election's key straight on the first server, through none of the nodes' proxies, as
   * an operator would: nobody's blocking query is for the leader, so it learns at its next renewal.
   */
  @Override
  public void deleteLease(String election) {
    InetSocketAddress server = consul.httpAddresses().get(0);
    Consul client =
        ConsulLeaseStoreProvider.client(
            List.of(HostAndPort.fromParts("127.0.0.1", server.getPort())), null, CALL_TIMEOUT);
    try {
      client.keyValueClient().deleteKey(ConsulLeaseStore.DEFAULT_PREFIX + election);
    } finally {
      client.destroy();
    }
  }

  @Override
  public boolean outageStopsServer() {
    return true;
  }

  @Override
  public List<String> refusedElectionNames() {
    return List.of("ends-with-slash/");
  }

  /** Kills every server (SIGKILL); their data directories stay. */
  @Override
  public void serverOutage() {
    consul.killAll();
  }

  /**
   * Starts the killed servers again on their ports and data, heals every node's proxies, and waits
   * until every node's store reaches Consul again.
   */
  @Override
  public void restore() throws Exception {
    consul.restartAll();
    super.restore();
    for (LeaseStore store : stores) {
      Awaitility.await("until " + store + " reaches Consul again")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50))
          .ignoreExceptionsInstanceOf(LeaseStoreException.class)
          .until(() -> store.read("conformance-reconnect-probe").isEmpty());
    }
  }
}
