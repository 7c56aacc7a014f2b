package dev.baton.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Configuration checks of the Consul provider and the store's builder; no server needed. */
class ConsulLeaseStoreProviderTest {

  private final ConsulLeaseStoreProvider provider = new ConsulLeaseStoreProvider();

  private static ElectionProperties properties(String... keysAndValues) {
    Properties p = new Properties();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ElectionProperties.of(p);
  }

  @Test
  void isFoundByServiceLoaderUnderTheNameConsul() {
    assertThat(properties(ElectionProperties.BACKEND, "consul").backendName()).isEqualTo("consul");
    assertThat(provider.keys()).allMatch(k -> k.startsWith("election.consul."));
  }

  @Test
  void opensOnTheLocalAgentByDefaultWithoutReachingIt() {
    try (LeaseStore store = provider.open(properties())) {
      assertThat(store.describe())
          .isEqualTo("consul at http://127.0.0.1:8500 under baton/elections/");
    }
  }

  @Test
  void refusesAUrlThatIsNotHttpHostPortNamingTheKeyTheValueAndWhatIsAccepted() {
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        ConsulLeaseStoreProvider.URL, "http://127.0.0.1:8500, consul2:8500")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(ConsulLeaseStoreProvider.URL)
        .hasMessageContaining("'consul2:8500' is not of the form http://host:port")
        .hasMessageContaining("http://127.0.0.1:8500");
  }

  @Test
  void refusesAnUnknownKeyNamingTheNearestOne() {
    assertThatThrownBy(
            () ->
                properties(ElectionProperties.BACKEND, "consul", "election.consul.urls", "x")
                    .openStore())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.consul.urls")
        .hasMessageContaining(ConsulLeaseStoreProvider.URL);
  }

  @Test
  void theTokenIsASecretNeverShown() {
    assertThat(ElectionProperties.isSecret(ConsulLeaseStoreProvider.TOKEN)).isTrue();
  }

  @Test
  void refusesAPrefixWithALeadingSlashOrAnElectionEndingInOne() {
    try (LeaseStore store = provider.open(properties())) {
      assertThatThrownBy(() -> store.checkElectionName("jobs/"))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("'jobs/'");
    }
    assertThatThrownBy(() -> provider.open(properties(ConsulLeaseStoreProvider.PREFIX, "/baton/")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("'/baton/'")
        .hasMessageContaining("without a leading slash");
  }
}
