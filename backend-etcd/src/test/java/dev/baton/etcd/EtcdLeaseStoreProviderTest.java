package dev.baton.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import io.etcd.jetcd.Client;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configuration checks of the etcd provider and the store's builder; no server needed. */
class EtcdLeaseStoreProviderTest {

  private final EtcdLeaseStoreProvider provider = new EtcdLeaseStoreProvider();

  /** {@code keysAndValues} with the endpoint every test that needs one points at. */
  private static ElectionProperties onLocalEtcd(String... keysAndValues) {
    String[] all = new String[keysAndValues.length + 2];
    all[0] = EtcdLeaseStoreProvider.ENDPOINTS;
    all[1] = "http://127.0.0.1:2379";
    System.arraycopy(keysAndValues, 0, all, 2, keysAndValues.length);
    return properties(all);
  }

  private static ElectionProperties properties(String... keysAndValues) {
    Properties p = new Properties();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ElectionProperties.of(p);
  }

  @Test
  void isFoundByServiceLoaderUnderTheNameEtcd() {
    assertThat(properties(ElectionProperties.BACKEND, "etcd").backendName()).isEqualTo("etcd");
    assertThat(provider.keys()).allMatch(k -> k.startsWith("election.etcd."));
  }

  @Test
  void requiresTheEndpoints() {
    assertThatThrownBy(() -> provider.open(properties()))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(EtcdLeaseStoreProvider.ENDPOINTS);
  }

  @Test
  void refusesAnEndpointThatIsNotAnHttpUrlNamingTheValueAndWhatIsAccepted() {
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        EtcdLeaseStoreProvider.ENDPOINTS, "http://127.0.0.1:2379, etcd2:2379")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(EtcdLeaseStoreProvider.ENDPOINTS)
        .hasMessageContaining("etcd2:2379")
        .hasMessageContaining("http://host:port");
  }

  @Test
  void refusesMixedSchemes() {
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        EtcdLeaseStoreProvider.ENDPOINTS,
                        "http://127.0.0.1:2379,https://127.0.0.1:2380")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("mixes");
  }

  @Test
  void wantsBothUsernameAndPasswordAndNeverShowsThePassword() {
    assertThatThrownBy(() -> provider.open(onLocalEtcd(EtcdLeaseStoreProvider.PASSWORD, "hunter2")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(EtcdLeaseStoreProvider.USERNAME)
        .hasMessageNotContaining("hunter2");
  }

  @Test
  void wantsBothCertAndKeyFiles(@TempDir Path dir) throws Exception {
    Path cert = Files.writeString(dir.resolve("client.pem"), "not read before the check");
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        EtcdLeaseStoreProvider.ENDPOINTS,
                        "https://127.0.0.1:2379",
                        EtcdLeaseStoreProvider.CERT_FILE,
                        cert.toString())))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(EtcdLeaseStoreProvider.KEY_FILE);
  }

  @Test
  void refusesAMissingTlsFile(@TempDir Path dir) {
    String missing = dir.resolve("nope.pem").toString();
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        EtcdLeaseStoreProvider.ENDPOINTS,
                        "https://127.0.0.1:2379",
                        EtcdLeaseStoreProvider.CA_FILE,
                        missing)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(EtcdLeaseStoreProvider.CA_FILE)
        .hasMessageContaining(missing);
  }

  @Test
  void refusesTlsFilesWithPlainHttpEndpoints(@TempDir Path dir) throws Exception {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    assertThatThrownBy(
            () -> provider.open(onLocalEtcd(EtcdLeaseStoreProvider.CA_FILE, ca.toString())))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("https://");
  }

  @Test
  void refusesAFileThatIsNotPem(@TempDir Path dir) throws Exception {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "not a certificate");
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        EtcdLeaseStoreProvider.ENDPOINTS,
                        "https://127.0.0.1:2379",
                        EtcdLeaseStoreProvider.CA_FILE,
                        ca.toString())))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(EtcdLeaseStoreProvider.CA_FILE);
  }

  @Test
  void refusesABadCallTimeout() {
    assertThatThrownBy(() -> provider.open(onLocalEtcd(EtcdLeaseStoreProvider.CALL_TIMEOUT, "0s")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(EtcdLeaseStoreProvider.CALL_TIMEOUT)
        .hasMessageContaining("0s");
  }

  @Test
  void leaseSharingIsOffByDefaultAndTakesADurationToShare() {
    try (LeaseStore own =
            provider.open(properties(EtcdLeaseStoreProvider.ENDPOINTS, "http://127.0.0.1:2379"));
        LeaseStore off = provider.open(onLocalEtcd(EtcdLeaseStoreProvider.LEASE_SHARING, "off"));
        LeaseStore shared =
            provider.open(onLocalEtcd(EtcdLeaseStoreProvider.LEASE_SHARING, "500ms"))) {
      assertThat(own.describe()).doesNotContain("shared");
      assertThat(own.renewBatchLimit()).isEqualTo(128);
      assertThat(off.describe()).doesNotContain("shared");
      assertThat(shared.describe()).contains("shared leases").contains("500 ms");
      assertThat(shared.renewBatchLimit()).isEqualTo(1024);
    }
  }

  @Test
  void maxTxnOpsIsEtcdsDefaultUnlessTheClusterAllowsMore() {
    try (LeaseStore byDefault =
            provider.open(onLocalEtcd(EtcdLeaseStoreProvider.LEASE_SHARING, "0s"));
        LeaseStore more =
            provider.open(
                onLocalEtcd(
                    EtcdLeaseStoreProvider.LEASE_SHARING,
                    "0s",
                    EtcdLeaseStoreProvider.MAX_TXN_OPS,
                    "1024"));
        LeaseStore ownLeases =
            provider.open(onLocalEtcd(EtcdLeaseStoreProvider.MAX_TXN_OPS, "1024"))) {
      assertThat(byDefault.describe()).doesNotContain("operations per transaction");
      assertThat(byDefault.renewBatchLimit()).isEqualTo(8 * 128);
      assertThat(more.describe()).contains("1024 operations per transaction");
      assertThat(more.renewBatchLimit()).isEqualTo(8 * 1024);
      // A lease per election needs a keep-alive each: the batch stays what one call can carry.
      assertThat(ownLeases.renewBatchLimit()).isEqualTo(128);
    }
  }

  @Test
  void refusesAMaxTxnOpsOutsideOneTo8192() {
    for (String bad : new String[] {"0", "-5", "8193", "many", "1.5"}) {
      assertThatThrownBy(() -> provider.open(onLocalEtcd(EtcdLeaseStoreProvider.MAX_TXN_OPS, bad)))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining(EtcdLeaseStoreProvider.MAX_TXN_OPS)
          .hasMessageContaining(bad)
          .hasMessageContaining("from 1 to 8192");
    }
  }

  @Test
  void refusesABadLeaseSharing() {
    for (String bad : new String[] {"on", "-1s", "11s"}) {
      assertThatThrownBy(
              () -> provider.open(onLocalEtcd(EtcdLeaseStoreProvider.LEASE_SHARING, bad)))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining(EtcdLeaseStoreProvider.LEASE_SHARING)
          .hasMessageContaining("'" + bad + "'")
          .hasMessageContaining("off");
    }
  }

  @Test
  void opensWithoutConnectingAndDescribesWhereItPoints() {
    try (LeaseStore store = provider.open(onLocalEtcd(EtcdLeaseStoreProvider.PREFIX, "/apps/x/"))) {
      assertThat(store.describe()).contains("http://127.0.0.1:2379").contains("/apps/x/");
    }
  }

  @Test
  void neverShowsAPasswordInAnEndpoint() {
    try (LeaseStore store =
        provider.open(
            properties(
                EtcdLeaseStoreProvider.ENDPOINTS,
                "http://root:s3cret@127.0.0.1:2379,http://127.0.0.1:22379"))) {
      assertThat(store.describe())
          .contains("http://root:<hidden>@127.0.0.1:2379")
          .doesNotContain("s3cret");
    }
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        EtcdLeaseStoreProvider.ENDPOINTS,
                        "http://root:s3cret@127.0.0.1:2379,ftp://h")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("root:<hidden>@")
        .hasMessageNotContaining("s3cret");
  }

  @Test
  void theBuilderChecksItsSettings() {
    try (Client client = Client.builder().endpoints("http://127.0.0.1:2379").build()) {
      assertThatThrownBy(() -> EtcdLeaseStore.builder(client).callTimeout(Duration.ZERO))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("callTimeout: 0s");
      assertThatThrownBy(() -> EtcdLeaseStore.builder(client).prefix(""))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("prefix");
      assertThatThrownBy(() -> EtcdLeaseStore.builder(client).sharedLeases(Duration.ofSeconds(-1)))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("keepAliveSharing");
      EtcdLeaseStore store = EtcdLeaseStore.builder(client).build();
      assertThatThrownBy(() -> store.checkElectionName(""))
          .isInstanceOf(ConfigurationException.class);
      store.checkElectionName("billing-cron");
      store.close();
    }
  }
}
