package dev.baton.kubernetes;

import dev.baton.conformance.RequiredServer;
import dev.baton.testservers.CrudMockDispatcher;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
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
 * <p>Each {@link #newClient()} is a separate client with its own connections, as separate processes
 * would have; {@link #newClientThrough} one that reaches the server only through a fault proxy (the
 * conformance fixture's nodes). Leases the tests use are deleted on {@link #close()} on a real
 * cluster; the mock is simply stopped.
 */
final class KubernetesTarget implements AutoCloseable {

  static final String KUBECONFIG_ENV = "BATON_K8S_KUBECONFIG";

  /**
   * The mock server logs every request at INFO through java.util.logging; keep a reference so the
   * level sticks.
   */
  private static final java.util.logging.Logger MOCK_SERVER_LOG = quiet("io.fabric8.mockwebserver");

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }

  static final String NAMESPACE_ENV = "BATON_K8S_NAMESPACE";

  private final KubernetesMockServer mock;
  private final CrudMockDispatcher dispatcher;
  private final Config realCluster;
  private final String namespace;
  private final List<KubernetesClient> clients = new ArrayList<>();
  private final List<String> leases = new ArrayList<>();

  private KubernetesTarget(
      KubernetesMockServer mock,
      CrudMockDispatcher dispatcher,
      Config realCluster,
      String namespace) {
    this.mock = mock;
    this.dispatcher = dispatcher;
    this.realCluster = realCluster;
    this.namespace = namespace;
  }

  /** The real cluster when one is configured, otherwise a fresh CRUD mock server. */
  static KubernetesTarget start() {
    String kubeconfig = System.getenv(KUBECONFIG_ENV);
    KubernetesTarget target =
        kubeconfig != null && !kubeconfig.isBlank()
            ? realCluster(
                Path.of(kubeconfig), System.getenv().getOrDefault(NAMESPACE_ENV, "default"))
            : crudMock();
    target.awaitAnswer();
    return target;
  }

  /**
   * Makes one request (a GET of a Lease that does not exist: only the {@code get} verb) so that the
   * server is known to answer, and so that the JVM's first call, which loads the client's classes
   * and can take seconds on a busy machine, is not one that a test times.
   */
  private void awaitAnswer() {
    KubernetesClient client = newClient();
    client.leases().inNamespace(namespace).withName("baton-it-ready").get();
  }

  static KubernetesTarget crudMock() {
    CrudMockDispatcher dispatcher = new CrudMockDispatcher();
    KubernetesMockServer server =
        new KubernetesMockServer(
            new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    return new KubernetesTarget(server, dispatcher, null, "test");
  }

  static KubernetesTarget realCluster(Path kubeconfig, String namespace) {
    RequiredServer.require(
        Files.isReadable(kubeconfig),
        "the Kubernetes cluster of " + KUBECONFIG_ENV + "=" + kubeconfig,
        "point "
            + KUBECONFIG_ENV
            + " at a readable kubeconfig, or unset it to test against the CRUD mock");
    return new KubernetesTarget(null, null, Config.fromKubeconfig(kubeconfig.toFile()), namespace);
  }

  /** The mock server's base URL; empty against a real cluster. */
  java.util.Optional<String> mockUrl() {
    return isMock()
        ? java.util.Optional.of(mock.url("/").replaceAll("/+$", ""))
        : java.util.Optional.empty();
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
        isMock()
            ? mock.createClient()
            : new KubernetesClientBuilder().withConfig(realCluster).build();
    clients.add(client);
    return client;
  }

  /**
   * A new client of the test's own, like {@link #newClient()}, that adds the method of every
   * request it sends, watches apart, to {@code requests}: what a store on it asks the server.
   */
  synchronized KubernetesClient newClientNoting(List<String> requests) {
    return newClientNoting(requests, new ArrayList<>());
  }

  /**
   * As {@link #newClientNoting(List)}, and also adds the path and query of every watch it opens to
   * {@code watches}: how many connections a store on it holds open.
   */
  synchronized KubernetesClient newClientNoting(List<String> requests, List<String> watches) {
    Config config =
        new ConfigBuilder(isMock() ? mockConfig() : realCluster).withNamespace(namespace).build();
    Interceptor noting =
        new Interceptor() {
          @Override
          public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
            String query = request.uri().getRawQuery();
            if (query == null || !query.contains("watch=true")) {
              requests.add(request.method());
            } else {
              watches.add(request.uri().getRawPath() + "?" + query);
            }
          }
        };
    KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(config)
            .withHttpClientBuilderConsumer(
                b -> b.addOrReplaceInterceptor("baton-it-requests", noting))
            .build();
    clients.add(client);
    return client;
  }

  /**
   * Where the API server listens, for a proxy to forward to: the mock's port on loopback, or the
   * kubeconfig's server, which must be a loopback address (tests reach nothing else).
   */
  InetSocketAddress serverAddress() {
    if (isMock()) {
      return new InetSocketAddress(InetAddress.getLoopbackAddress(), mock.getPort());
    }
    URL url = masterUrl(realCluster);
    int port = url.getPort() >= 0 ? url.getPort() : url.getDefaultPort();
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(url.getHost());
    } catch (UnknownHostException e) {
      throw new IllegalStateException(
          "the API server host '" + url.getHost() + "' of " + KUBECONFIG_ENV + " does not resolve",
          e);
    }
    return Arrays.stream(addresses)
        .filter(InetAddress::isLoopbackAddress)
        .filter(a -> a.getAddress().length == 4) // the proxies listen on 127.0.0.1
        .findFirst()
        .map(a -> new InetSocketAddress(a, port))
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "the conformance suite proxies every node to the API server, and tests reach loopback addresses only, but "
                        + KUBECONFIG_ENV
                        + " names server "
                        + url.getProtocol()
                        + "://"
                        + url.getHost()
                        + ":"
                        + port
                        + " ("
                        + Arrays.toString(addresses)
                        + "); reach the cluster through 127.0.0.1 (kind, k3d and minikube's docker driver do;"
                        + " for a remote cluster use `kubectl proxy` or an SSH tunnel, see docs/kubernetes.md)"));
  }

  /**
   * A new client that reaches the API server only through {@code proxy} (on 127.0.0.1), with the
   * request and connection timeouts of {@code callTimeout} and no retries, as the provider builds
   * one. The URL keeps the server's host name when it has one, so TLS checks the same name it would
   * without the proxy (a certificate names hosts, not ports); an IP address becomes 127.0.0.1,
   * which is where the proxy listens. TLS itself passes through the proxy untouched.
   */
  synchronized KubernetesClient newClientThrough(InetSocketAddress proxy, Duration callTimeout) {
    Config base = isMock() ? mockConfig() : realCluster;
    URL direct = masterUrl(base);
    String host =
        isIpLiteral(direct.getHost()) ? proxy.getAddress().getHostAddress() : direct.getHost();
    String proxied = direct.getProtocol() + "://" + host + ":" + proxy.getPort() + direct.getPath();
    int millis = Math.toIntExact(callTimeout.toMillis());
    Config config =
        new ConfigBuilder(base)
            .withMasterUrl(proxied)
            .withNamespace(namespace)
            .withRequestTimeout(millis)
            .withConnectionTimeout(millis)
            .withRequestRetryBackoffLimit(0)
            .build();
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    clients.add(client);
    return client;
  }

  /**
   * What {@code mock.createClient()} configures, without its URL being fixed to the mock's own
   * port.
   */
  private Config mockConfig() {
    return new ConfigBuilder(Config.empty())
        .withMasterUrl(mock.url("/"))
        .withNamespace(namespace)
        .build();
  }

  private static URL masterUrl(Config config) {
    try {
      return new URL(config.getMasterUrl());
    } catch (MalformedURLException e) {
      throw new IllegalStateException(
          "the API server URL of the client configuration is malformed", e);
    }
  }

  private static boolean isIpLiteral(String host) {
    return host.startsWith("[") || host.contains(":") || host.matches("[0-9.]+");
  }

  /**
   * Deletes the Lease {@code name} on {@link #close()} (on a real cluster; the mock just stops).
   */
  synchronized void remember(String name) {
    if (!leases.contains(name)) {
      leases.add(name);
    }
  }

  /** A unique Lease name for one test, remembered for clean-up. */
  synchronized String election(String test) {
    String name =
        ("baton-it-" + test + "-" + UUID.randomUUID().toString().substring(0, 8))
            .toLowerCase(Locale.ROOT)
            .replace('_', '-');
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
      dispatcher.close();
    }
  }

  /** The Lease as the API server has it, read with a client of the test's own. */
  Lease lease(KubernetesClient client, String name) {
    return client.leases().inNamespace(namespace).withName(name).get();
  }

  @Override
  public String toString() {
    return isMock()
        ? "CRUD mock at " + mock.url("")
        : "cluster of " + System.getenv(KUBECONFIG_ENV);
  }
}
