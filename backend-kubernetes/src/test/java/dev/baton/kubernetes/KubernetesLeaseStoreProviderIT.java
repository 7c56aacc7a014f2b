package dev.baton.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.conformance.CapturedLog;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code election.backend=kubernetes} end to end: ServiceLoader, kubeconfig, a working store,
 * closing.
 */
class KubernetesLeaseStoreProviderIT {

  private static final String TOKEN = "not-a-real-token-3141";

  private static KubernetesTarget target;

  @TempDir Path dir;

  @BeforeAll
  static void startServer() {
    target = KubernetesTarget.start();
  }

  @AfterAll
  static void stopServer() {
    if (target != null) {
      target.close();
    }
  }

  /** The real cluster's kubeconfig, or one written here for the mock with a made-up token. */
  private Path kubeconfig() throws IOException {
    if (!target.isMock()) {
      return Path.of(System.getenv(KubernetesTarget.KUBECONFIG_ENV));
    }
    Path file = dir.resolve("kubeconfig.yaml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: mock",
            "  cluster:",
            "    server: " + target.mockUrl().orElseThrow(),
            "contexts:",
            "- name: mock",
            "  context:",
            "    cluster: mock",
            "    user: tester",
            "    namespace: from-context",
            "current-context: mock",
            "users:",
            "- name: tester",
            "  user:",
            "    token: " + TOKEN,
            ""));
    return file;
  }

  @Test
  void opensAWorkingStoreFromPropertiesAndClosesTheClientItBuilt() throws IOException {
    Properties p = new Properties();
    p.setProperty("election.backend", "kubernetes");
    p.setProperty("election.kubernetes.kubeconfig", kubeconfig().toString());
    p.setProperty("election.kubernetes.namespace", target.namespace());
    p.setProperty("election.kubernetes.call-timeout", "3s");
    String election = target.election("provider");

    try (CapturedLog log = CapturedLog.start()) {
      LeaseStore store = ElectionProperties.of(p).openStore();
      try {
        assertThat(store.tryAcquire(election, "a", Duration.ofSeconds(5)).isGranted()).isTrue();
        assertThat(store.read(election))
            .hasValueSatisfying(r -> assertThat(r.holder()).isEqualTo("a"));
        assertThat(store.describe())
            .startsWith("kubernetes (http")
            .contains("namespace " + target.namespace())
            .doesNotContain(TOKEN);
      } finally {
        store.close();
      }
      assertThatThrownBy(() -> store.read(election))
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining("closed");
      assertThat(log.text()).doesNotContain(TOKEN);
    }
    assertThat(target.lease(target.newClient(), election).getSpec().getHolderIdentity())
        .isEqualTo("a");
  }
}
