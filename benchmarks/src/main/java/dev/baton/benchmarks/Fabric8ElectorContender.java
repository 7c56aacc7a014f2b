package dev.baton.benchmarks;

import dev.baton.conformance.FaultProxy;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * fabric8's {@code LeaderElector} with a {@code LeaseLock} on the same mock API server, as
 * fabric8's documentation shows it ({@code client.leaderElector().withConfig(...).build()}), with
 * the client's default HTTP settings. The lease is Baton's; the renew deadline and retry period
 * keep client-go's recommended proportions (15 s / 10 s / 2 s), which fabric8 also enforces: it
 * refuses a renew deadline under 2.2 retry periods, so Baton's 1 s retry at a 2 s deadline is not
 * accepted. {@code releaseOnCancel} is on, so that cancelling hands over at once as Baton's close
 * does.
 */
final class Fabric8ElectorContender implements Contender {

  private final KubernetesMock mock;
  private final Duration lease;
  private final Duration renewDeadline;
  private final Duration retryPeriod;

  Fabric8ElectorContender(KubernetesMock mock, Settings settings) {
    this.mock = mock;
    this.lease = settings.leaseDuration();
    this.renewDeadline = lease.multipliedBy(10).dividedBy(15);
    this.retryPeriod = lease.multipliedBy(2).dividedBy(15);
  }

  @Override
  public String name() {
    return "fabric8 LeaderElector";
  }

  @Override
  public String server() {
    return "fabric8 Kubernetes mock API server (the same server)";
  }

  @Override
  public String library() {
    return "fabric8 kubernetes-client "
        + Versions.of(LeaderElector.class, "io.fabric8", "kubernetes-client-api");
  }

  @Override
  public Map<String, String> settings() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put(
        "lease / renew deadline / retry",
        lease.toMillis()
            + " / "
            + renewDeadline.toMillis()
            + " / "
            + retryPeriod.toMillis()
            + " ms (client-go's 15 : 10 : 2)");
    s.put("lock", "LeaseLock");
    s.put("releaseOnCancel", "true");
    s.put(
        "client",
        "defaults: request timeout 10 s, connection timeout 10 s, up to 10 retries with back-off");
    return s;
  }

  @Override
  public String requestsCountedAs() {
    return "HTTP requests the API server received from the node (by User-Agent)";
  }

  @Override
  public Duration leaseDuration() {
    return lease;
  }

  @Override
  public Node newNode(String election, String candidate, Timeline timeline) {
    FaultProxy proxy = FaultProxy.start(mock.address());
    Config config = Backends.kubernetesConfig(proxy.address(), candidate);
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    return new ElectorNode(candidate, timeline, proxy, client, election, this, mock);
  }

  private static final class ElectorNode extends Node {
    private final KubernetesClient client;
    private final LeaderElector elector;
    private volatile boolean leading;
    private volatile CompletableFuture<?> running;

    ElectorNode(
        String id,
        Timeline timeline,
        FaultProxy proxy,
        KubernetesClient client,
        String election,
        Fabric8ElectorContender s,
        KubernetesMock mock) {
      super(id, timeline, proxy, Optional.of(proxy), () -> mock.requestsFrom(id));
      this.client = client;
      this.elector =
          client
              .leaderElector()
              .withConfig(
                  new LeaderElectionConfigBuilder()
                      .withName(election)
                      .withLock(new LeaseLock(Backends.K8S_NAMESPACE, election, id))
                      .withLeaseDuration(s.lease)
                      .withRenewDeadline(s.renewDeadline)
                      .withRetryPeriod(s.retryPeriod)
                      .withReleaseOnCancel(true)
                      .withLeaderCallbacks(
                          new LeaderCallbacks(this::started, this::stopped, leader -> {}))
                      .build())
              .build();
    }

    private synchronized void started() {
      if (!leading) {
        leading = true;
        elected();
      }
    }

    private synchronized void stopped() {
      if (leading) {
        leading = false;
        revoked();
      }
    }

    @Override
    void start() {
      running = elector.start();
    }

    /** Cancelling the election stops leading and, with releaseOnCancel, releases the Lease. */
    @Override
    void leave() {
      CompletableFuture<?> r = running;
      if (r != null) {
        r.cancel(true);
      }
    }

    @Override
    boolean believesLeader() {
      return leading;
    }

    @Override
    void closeClient() {
      try {
        leave();
      } finally {
        client.close();
      }
    }
  }
}
