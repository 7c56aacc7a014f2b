package dev.baton.etcd;

import dev.baton.conformance.ProxiedServerFixture;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.testservers.EtcdServers;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * The conformance suite's view of etcd: a real three-member cluster on loopback, started from the
 * Debian {@code etcd} binary (or, with {@code -Dbaton.servers=containers}, in containers), and one
 * jetcd client per node that reaches all three members only through that node's own fault proxies.
 * A server outage kills every member (SIGKILL) and the restore starts them again on the same ports
 * and data.
 *
 * <p>After a cut, gRPC reconnects only when its connect backoff (1 s, growing by 1.6 each failed
 * attempt) runs out, so a client may stay unconnected for seconds after the heal. The electors ride
 * that out; but a scenario that calls a store directly right after the previous one healed would
 * see that scenario's fault. So the restore after each scenario heals every proxy and waits until
 * every node's client reaches etcd again.
 */
final class EtcdConformanceFixture extends ProxiedServerFixture {

  /**
   * The suite's default timings with etcd's extra time after a crash in the allowance. etcd counts
   * whole seconds, and the 3 s lease is one; the store's default gives each election an etcd lease
   * of exactly that TTL, so a crashed holder's key goes 3 s after its last renewal began, plus up
   * to 0.5 s until etcd's expiry check (every 500 ms) sees it. That half second is etcd's, not the
   * machine's slowness, so the allowance gets it on top of its 3 s.
   */
  static final Timings TIMINGS =
      Timings.SHORT.withAllowance(Timings.SHORT.allowance().plusMillis(500));

  /**
   * About a third of the 2 s renew deadline; the store's own deadline holds through a blackhole.
   */
  static final Duration CALL_TIMEOUT = Duration.ofMillis(700);

  /**
   * Longest wait for the restarted cluster and every client to serve: gRPC's backoff after a long
   * cut.
   */
  private static final Duration RECONNECT_PATIENCE = Duration.ofSeconds(30);

  private final List<LeaseStore> stores = new CopyOnWriteArrayList<>();
  private EtcdServers etcd;

  @Override
  protected List<InetSocketAddress> startServers() {
    etcd = EtcdServers.start(3);
    return etcd.clientAddresses();
  }

  @Override
  protected LeaseStore openStore(String node, List<InetSocketAddress> through) {
    String[] endpoints =
        through.stream().map(a -> "http://127.0.0.1:" + a.getPort()).toArray(String[]::new);
    Client client = closeLater(Client.builder().endpoints(endpoints).build());
    LeaseStore store = EtcdLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
    stores.add(store);
    return store;
  }

  @Override
  protected void stopServers() {
    if (etcd != null) {
      etcd.close();
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
  public boolean pushesLeaseLoss() {
    return true;
  }

  @Override
  public boolean canDeleteLeases() {
    return true;
  }

  /** Deletes the election's key through a client of its own, straight to the members. */
  @Override
  public void deleteLease(String election) throws Exception {
    try (Client operator = Client.builder().endpoints(etcd.endpoints()).build()) {
      operator
          .getKVClient()
          .delete(
              ByteSequence.from(EtcdLeaseStore.DEFAULT_PREFIX + election, StandardCharsets.UTF_8))
          .get(RECONNECT_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public boolean outageStopsServer() {
    return true;
  }

  /** Kills every member (SIGKILL); their data directories stay. */
  @Override
  public void serverOutage() {
    etcd.killAll();
  }

  /**
   * Starts the killed members again on their ports and data, heals every node's proxies, and waits
   * until every node's client reaches etcd again.
   */
  @Override
  public void restore() throws Exception {
    etcd.restartAll();
    super.restore();
    for (LeaseStore store : stores) {
      Awaitility.await("until " + store + " reaches etcd again")
          .atMost(RECONNECT_PATIENCE)
          .pollInterval(Duration.ofMillis(50))
          .ignoreExceptionsInstanceOf(LeaseStoreException.class)
          .until(() -> store.read("conformance-reconnect-probe").isEmpty());
    }
  }
}
