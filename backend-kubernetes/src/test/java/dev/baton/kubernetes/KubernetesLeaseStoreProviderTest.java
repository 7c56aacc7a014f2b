package dev.baton.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStoreProvider;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KubernetesLeaseStoreProviderTest {

  private final KubernetesLeaseStoreProvider provider = new KubernetesLeaseStoreProvider();

  @TempDir Path dir;

  private static ElectionProperties properties(String... keysAndValues) {
    Properties p = new Properties();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ElectionProperties.of(p);
  }

  @Test
  void isFoundByServiceLoaderUnderItsNameWithItsKeys() {
    assertThat(
            ServiceLoader.load(LeaseStoreProvider.class).stream().map(ServiceLoader.Provider::type))
        .contains(KubernetesLeaseStoreProvider.class);
    assertThat(provider.name()).isEqualTo("kubernetes");
    assertThat(provider.keys())
        .containsExactlyInAnyOrder(
            "election.kubernetes.namespace",
            "election.kubernetes.kubeconfig",
            "election.kubernetes.call-timeout");
  }

  @Test
  void aCallTimeoutOverHalfTheRenewDeadlineIsRefusedWithItsKey() {
    assertThatThrownBy(() -> provider.open(properties("election.kubernetes.call-timeout", "6s")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.kubernetes.call-timeout: 6s")
        .hasMessageContaining("at most half the renew deadline");
  }

  @Test
  void aMissingKubeconfigIsNamedInTheError() {
    String missing = dir.resolve("nope.yaml").toString();

    assertThatThrownBy(() -> provider.open(properties("election.kubernetes.kubeconfig", missing)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.kubernetes.kubeconfig")
        .hasMessageContaining(missing)
        .hasMessageContaining("readable");
  }

  @Test
  void anUnusableKubeconfigIsRefusedWithoutQuotingIt() throws IOException {
    Path file = dir.resolve("broken.yaml");
    Files.writeString(file, "users: [ {name: x, user: {token: s3cr3t-t0ken-value\n");

    assertThatThrownBy(
            () -> provider.open(properties("election.kubernetes.kubeconfig", file.toString())))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(file.toString())
        .hasMessageNotContaining("s3cr3t")
        .satisfies(e -> assertThat(e.getCause()).isNull());
  }

  @Test
  void namespaceIsTheConfiguredOneThenThePodsOwnThenTheKubeconfigsThenDefault() throws IOException {
    Path podFile = dir.resolve("namespace");
    Path noPodFile = dir.resolve("absent");
    Config withContext = Config.empty();
    withContext.setNamespace("from-context");
    Files.writeString(podFile, "billing\n");

    assertThat(KubernetesLeaseStoreProvider.namespace(Optional.of("chosen"), podFile, withContext))
        .isEqualTo("chosen");
    assertThat(KubernetesLeaseStoreProvider.namespace(Optional.empty(), podFile, withContext))
        .isEqualTo("billing");
    assertThat(KubernetesLeaseStoreProvider.namespace(Optional.empty(), noPodFile, withContext))
        .isEqualTo("from-context");
    assertThat(KubernetesLeaseStoreProvider.namespace(Optional.empty(), noPodFile, Config.empty()))
        .isEqualTo("default");
  }
}
