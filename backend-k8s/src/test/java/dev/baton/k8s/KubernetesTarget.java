package dev.baton.k8s;

import dev.baton.conformance.RequiredServer;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * The API server the integration tests talk to: the fabric8 mock server in CRUD mode on loopback,
 * or, when {@code BATON_K8S_KUBECONFIG} names a kubeconfig, that real cluster (in the namespace
 * {@code BATON_K8S_NAMESPACE}, default {@code default}). Tests only see this class, so switching
 * between the two changes nothing else.
 *
 * <p>Each {@link #newClient()} is a separate client with its own connections, as separate
 * processes would have. Leases the tests create are deleted on {@link #close()}.
 */
final class KubernetesTarget implements AutoCloseable {

  static final String KUBECONFIG_ENV = "BATON_K8S_KUBECONFIG";

  /** The mock server logs every request at INFO through java.util.logging; keep a reference so the level sticks. */
  private static final java.util.logging.Logger MOCK_SERVER_LOG = quiet("io.fabric8.mockwebserver");

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }
  static final String NAMESPACE_ENV = "BATON_K8S_NAMESPACE";

  private final KubernetesMockServer mock;
  private final Config realCluster;
  private final String namespace;
  private final List<KubernetesClient> clients = new ArrayList<>();
  private final List<String> leases = new ArrayList<>();

  private KubernetesTarget(KubernetesMockServer mock, Config realCluster, String namespace) {
    this.mock = mock;
    this.realCluster = realCluster;
    this.namespace = namespace;
  }

  /** The real cluster when one is configured, otherwise a fresh CRUD mock server. */
  static KubernetesTarget start() {
    String kubeconfig = System.getenv(KUBECONFIG_ENV);
    KubernetesTarget target =
        kubeconfig != null && !kubeconfig.isBlank()
            ? realCluster(Path.of(kubeconfig), System.getenv().getOrDefault(NAMESPACE_ENV, "default"))
            : crudMock();
    target.awaitAnswer();
    return target;
  }

  /**
   * Makes one request (a GET of a Lease that does not exist: only the {@code get} verb) so that
   * the server is known to answer, and so that the JVM's first call, which loads the client's
   * classes and can take seconds on a busy machine, is not one that a test times.
   */
  private void awaitAnswer() {
    KubernetesClient client = newClient();
    client.leases().inNamespace(namespace).withName("baton-it-ready").get();
  }

  static KubernetesTarget crudMock() {
    KubernetesMockServer server =
        new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    return new KubernetesTarget(server, null, "test");
  }

  static KubernetesTarget realCluster(Path kubeconfig, String namespace) {
    RequiredServer.require(
        Files.isReadable(kubeconfig),
        "the Kubernetes cluster of " + KUBECONFIG_ENV + "=" + kubeconfig,
        "point " + KUBECONFIG_ENV + " at a readable kubeconfig, or unset it to test against the CRUD mock");
    return new KubernetesTarget(null, Config.fromKubeconfig(kubeconfig.toFile()), namespace);
  }

  /** The mock server's base URL; empty against a real cluster. */
  java.util.Optional<String> mockUrl() {
    return isMock() ? java.util.Optional.of(mock.url("/").replaceAll("/+$", "")) : java.util.Optional.empty();
  }

  boolean isMock() {
    return mock != null;
  }

  String namespace() {
    return namespace;
  }

  /** A new client of the test's own, as a separate process would have one. */
  synchronized KubernetesClient newClient() {
    KubernetesClient client =
        isMock() ? mock.createClient() : new KubernetesClientBuilder().withConfig(realCluster).build();
    clients.add(client);
    return client;
  }

  /** A unique Lease name for one test, remembered for clean-up. */
  synchronized String election(String test) {
    String name =
        ("baton-it-" + test + "-" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase(Locale.ROOT).replace('_', '-');
    leases.add(name);
    return name;
  }

  @Override
  public synchronized void close() {
    if (!isMock() && !leases.isEmpty()) {
      KubernetesClient client = newClient();
      for (String name : leases) {
        client.leases().inNamespace(namespace).withName(name).delete();
      }
    }
    clients.forEach(KubernetesClient::close);
    if (mock != null) {
      mock.destroy();
    }
  }

  /** The Lease as the API server has it, read with a client of the test's own. */
  Lease lease(KubernetesClient client, String name) {
    return client.leases().inNamespace(namespace).withName(name).get();
  }

  @Override
  public String toString() {
    return isMock() ? "CRUD mock at " + mock.url("") : "cluster of " + System.getenv(KUBECONFIG_ENV);
  }
}
