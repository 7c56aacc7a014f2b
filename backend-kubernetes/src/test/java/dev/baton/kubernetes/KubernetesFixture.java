package dev.baton.kubernetes;

import dev.baton.conformance.ProxiedServerFixture;
import dev.baton.conformance.Timings;
import dev.baton.election.Acquisition;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.LeaseStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * Conformance fixture for Kubernetes Leases: the API server of {@link KubernetesTarget} (the CRUD
 * mock on loopback, or a real cluster), and per node a client of its own whose master URL is that
 * node's {@link dev.baton.conformance.FaultProxy}, so cutting or blackholing the proxy cuts off
 * that node alone, its watches included. Against a real cluster TLS passes through the proxy
 * untouched and the client verifies the server as it would without it.
 */
// close() is ProxiedServerFixture's, which may throw what closing a server throws.
@SuppressWarnings("try")
final class KubernetesFixture extends ProxiedServerFixture {

  /** Well under the renew deadline: a campaign is two round trips, each bounded by it. */
  private static final Duration CALL_TIMEOUT = Timings.SHORT.renewDeadline().dividedBy(3);

  private KubernetesTarget target;
  private KubernetesClient operator;

  @Override
  protected List<InetSocketAddress> startServers() {
    target = KubernetesTarget.start();
    // Made now, so that a deletion's timing does not include a client's start.
    operator = target.newClient(); // the target closes it
    return List.of(target.serverAddress());
  }

  @Override
  protected LeaseStore openStore(String node, List<InetSocketAddress> through) {
    KubernetesClient client = target.newClientThrough(through.get(0), CALL_TIMEOUT);
    LeaseStore store =
        KubernetesLeaseStore.builder(client)
            .namespace(target.namespace())
            .callTimeout(CALL_TIMEOUT)
            .build();
    return new RememberingLeaseStore(store, target);
  }

  @Override
  protected void stopServers() {
    if (target != null) {
      target
          .close(); // closes every client, deletes the suite's Leases on a real cluster, stops the
      // mock
    }
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

  /**
   * Deletes the Lease object with a client of the fixture's own, as {@code kubectl delete} would.
   */
  @Override
  public void deleteLease(String election) {
    operator.leases().inNamespace(target.namespace()).withName(election).delete();
  }

  @Override
  public boolean judgesExpiryOnServer() {
    return false; // each follower counts leaseDurationSeconds from when it saw the Lease change
  }

  @Override
  public List<String> refusedElectionNames() {
    return List.of("Not_A_DNS_Name", "ends-with-a-dash-");
  }

  /** Tells the target every election the suite campaigns in, so a real cluster is left clean. */
  private static final class RememberingLeaseStore extends ForwardingLeaseStore {
    private final KubernetesTarget target;

    RememberingLeaseStore(LeaseStore store, KubernetesTarget target) {
      super(store);
      this.target = target;
    }

    @Override
    public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
      target.remember(election);
      return super.tryAcquire(election, candidate, ttl);
    }
  }
}
