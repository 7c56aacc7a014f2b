package dev.baton.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.baton.conformance.FaultProxy;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * In real-cluster mode the conformance fixture puts a TCP proxy on 127.0.0.1 between each node and
 * the API server, and TLS passes through it untouched. These tests show that the test clients still
 * verify the server there: its certificate chain, and its host name, which is the one the
 * kubeconfig names (a certificate names hosts, not ports). A stand-in HTTPS server with a
 * certificate made here plays the API server; it answers every request with 404, which fabric8
 * reads as "no such Lease".
 */
class ProxiedTlsIT {

  private static final String PASSWORD = "changeit";

  /** Certificates made once for the class (each keytool run is a JVM start). */
  @TempDir static Path certificates;

  @TempDir Path dir;

  private HttpsServer server;
  private final AtomicInteger requests = new AtomicInteger();
  private KubernetesTarget target;
  private FaultProxy proxy;

  @BeforeAll
  static void makeCertificates() throws Exception {
    certificate("localhost", "localhost", "dns:localhost");
    certificate("loopback-ip", "127.0.0.1", "ip:127.0.0.1");
    certificate("other", "localhost", "dns:localhost");
  }

  @AfterEach
  void stop() {
    if (target != null) {
      target.close();
    }
    if (proxy != null) {
      proxy.close();
    }
    if (server != null) {
      server.stop(0);
    }
  }

  @Test
  void aCertificateForTheKubeconfigsHostNameIsVerifiedThroughTheProxy() throws Exception {
    String ca = startServer("localhost");
    KubernetesClient client = clientThroughProxy("localhost", ca);

    assertThat(client.leases().inNamespace("test").withName("no-such-lease").get()).isNull();
    assertThat(requests).hasPositiveValue();
    assertThat(proxy.bytesToServer()).as("bytes that went through the proxy").isPositive();
  }

  @Test
  void anIpAddressInTheKubeconfigIsVerifiedAgainstTheCertificatesIpAddress() throws Exception {
    String ca = startServer("loopback-ip");
    KubernetesClient client = clientThroughProxy("127.0.0.1", ca);

    assertThat(client.leases().inNamespace("test").withName("no-such-lease").get()).isNull();
    assertThat(proxy.bytesToServer()).as("bytes that went through the proxy").isPositive();
  }

  @Test
  void aCertificateThatDoesNotNameTheHostIsRefusedThroughTheProxyAsItWouldBeDirectly()
      throws Exception {
    String ca = startServer("localhost");
    KubernetesClient client = clientThroughProxy("127.0.0.1", ca);

    assertThatThrownBy(() -> client.leases().inNamespace("test").withName("no-such-lease").get())
        .hasStackTraceContaining("No subject alternative names matching IP address 127.0.0.1");
    assertThat(requests).as("requests that reached the server's handler").hasValue(0);
  }

  @Test
  void aServerSignedByAnotherAuthorityIsRefusedThroughTheProxy() throws Exception {
    startServer("localhost");
    String otherCa = pem("other");
    KubernetesClient client = clientThroughProxy("localhost", otherCa);

    assertThatThrownBy(() -> client.leases().inNamespace("test").withName("no-such-lease").get())
        .hasStackTraceContaining("PKIX path");
    assertThat(requests).as("requests that reached the server's handler").hasValue(0);
  }

  /**
   * Starts the stand-in API server on 127.0.0.1 with certificate {@code alias}; returns it (PEM),
   * its own CA.
   */
  private String startServer(String alias) throws Exception {
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(certificates.resolve(alias + ".p12"))) {
      keys.load(in, PASSWORD.toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, PASSWORD.toCharArray());
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(kmf.getKeyManagers(), null, null);
    server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(tls));
    server.createContext(
        "/",
        exchange -> {
          requests.incrementAndGet();
          byte[] body =
              "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}"
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(404, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    server.start();
    return pem(alias);
  }

  private static String pem(String alias) throws IOException {
    return Files.readString(certificates.resolve(alias + ".pem"), StandardCharsets.US_ASCII);
  }

  /**
   * A self-signed certificate made with the JDK's keytool, kept as {@code <alias>.p12} and {@code
   * <alias>.pem}.
   */
  private static void certificate(String alias, String commonName, String subjectAlternativeName)
      throws IOException, InterruptedException {
    Path store = certificates.resolve(alias + ".p12");
    Path pem = certificates.resolve(alias + ".pem");
    keytool(
        "-genkeypair",
        "-alias",
        alias,
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-validity",
        "2",
        "-dname",
        "CN=" + commonName,
        "-ext",
        "SAN=" + subjectAlternativeName,
        "-keystore",
        store.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        PASSWORD,
        "-keypass",
        PASSWORD);
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        alias,
        "-keystore",
        store.toString(),
        "-storepass",
        PASSWORD,
        "-file",
        pem.toString());
  }

  private static void keytool(String... args) throws IOException, InterruptedException {
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    List<String> command = new java.util.ArrayList<>(List.of(keytool.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("keytool finished").isTrue();
    assertThat(p.exitValue()).as("keytool %s: %s", command, output).isZero();
  }

  /**
   * A kubeconfig naming the server as {@code https://<host>:<port>} with {@code ca} as its
   * authority, read as real-cluster mode reads it, and a client through a proxy as the conformance
   * fixture builds it.
   */
  private KubernetesClient clientThroughProxy(String host, String ca) throws IOException {
    Path kubeconfig = dir.resolve("kubeconfig");
    String caData = Base64.getEncoder().encodeToString(ca.getBytes(StandardCharsets.US_ASCII));
    Files.writeString(
        kubeconfig,
        String.join(
            "\n",
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: stand-in",
            "  cluster:",
            "    server: https://" + host + ":" + server.getAddress().getPort(),
            "    certificate-authority-data: " + caData,
            "contexts:",
            "- name: stand-in",
            "  context: {cluster: stand-in, user: tester, namespace: test}",
            "current-context: stand-in",
            "users:",
            "- name: tester",
            "  user: {token: not-a-real-token}",
            ""));
    target = KubernetesTarget.realCluster(kubeconfig, "test");
    proxy = FaultProxy.start(target.serverAddress());
    return target.newClientThrough(proxy.address(), Duration.ofSeconds(5));
  }
}
