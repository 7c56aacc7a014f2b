package dev.baton.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.baton.conformance.RequiredServer;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.testservers.EtcdCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The provider's TLS settings against an etcd member that serves clients over TLS and requires a
 * client certificate. The certificates are made for the test with openssl.
 */
class EtcdTlsIT {

  private static final Duration TTL = Duration.ofSeconds(15);

  @TempDir static Path certs;
  private static EtcdCluster etcd;

  @BeforeAll
  static void startTlsMember() throws Exception {
    EtcdCluster.requireBinary();
    RequiredServer.require(
        Files.isExecutable(Path.of("/usr/bin/openssl")),
        "openssl (to make test certificates)",
        "scripts/install-etcd");
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=baton-test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem");
    issue(
        "server",
        "/CN=127.0.0.1",
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
    issue("client", "/CN=baton-test-client", "extendedKeyUsage=clientAuth\n");
    etcd =
        EtcdCluster.startTls(
            1,
            new EtcdCluster.Tls(
                certs.resolve("ca.pem"), certs.resolve("server.pem"), certs.resolve("server.key")));
  }

  @AfterAll
  static void stop() {
    if (etcd != null) {
      etcd.close();
    }
  }

  private static void issue(String name, String subject, String extensions) throws Exception {
    Files.writeString(certs.resolve(name + ".ext"), extensions, StandardCharsets.UTF_8);
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        subject,
        "-keyout",
        name + ".key",
        "-out",
        name + ".csr");
    openssl(
        "x509",
        "-req",
        "-in",
        name + ".csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        name + ".ext",
        "-out",
        name + ".pem");
  }

  private static void openssl(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("/usr/bin/openssl"));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command)
            .directory(certs.toFile())
            .redirectErrorStream(true)
            .redirectOutput(certs.resolve("openssl.log").toFile())
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("openssl %s finished", args[0]).isTrue();
    assertThat(p.exitValue())
        .as("openssl %s (see %s)", String.join(" ", args), certs.resolve("openssl.log"))
        .isZero();
  }

  private static Properties tlsProperties() {
    Properties p = new Properties();
    p.setProperty(ElectionProperties.BACKEND, "etcd");
    p.setProperty(EtcdLeaseStoreProvider.ENDPOINTS, etcd.endpointList());
    p.setProperty(EtcdLeaseStoreProvider.CA_FILE, certs.resolve("ca.pem").toString());
    p.setProperty(EtcdLeaseStoreProvider.CERT_FILE, certs.resolve("client.pem").toString());
    p.setProperty(EtcdLeaseStoreProvider.KEY_FILE, certs.resolve("client.key").toString());
    // The first call of a fresh JVM sets up TLS, which took over 2 s on a busy test machine.
    p.setProperty(EtcdLeaseStoreProvider.CALL_TIMEOUT, "10s");
    p.setProperty(ElectionProperties.RENEW_DEADLINE, "20s");
    return p;
  }

  @Test
  void aStoreFromPropertiesTalksTlsWithAClientCertificate() {
    assertThat(etcd.endpointList()).startsWith("https://");
    try (LeaseStore store = ElectionProperties.of(tlsProperties()).openStore()) {
      String election = "tls-" + System.nanoTime();
      Lease lease = store.tryAcquire(election, "a", TTL).lease().orElseThrow();
      assertThat(store.renew(lease).token()).isEqualTo(lease.token());
      assertThat(store.read(election).orElseThrow().holder()).isEqualTo("a");
      store.release(lease);
      assertThat(store.read(election)).isEmpty();
    }
  }

  @Test
  void withoutTheClientCertificateTheServerRefusesAndTheStoreSaysSoWithinTheCallTimeout() {
    Properties p = tlsProperties();
    p.remove(EtcdLeaseStoreProvider.CERT_FILE);
    p.remove(EtcdLeaseStoreProvider.KEY_FILE);
    p.setProperty(EtcdLeaseStoreProvider.CALL_TIMEOUT, "2s");
    try (LeaseStore store = ElectionProperties.of(p).openStore()) {
      assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () ->
              assertThatThrownBy(
                      () -> store.tryAcquire("tls-no-cert-" + System.nanoTime(), "a", TTL))
                  .isInstanceOf(LeaseStoreException.class));
    }
  }
}
