package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.baton.election.Acquisition;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.LeaseStoreProvider;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Configuration checks, and opening a store by name on embedded H2 (no server needed). */
class JdbcLeaseStoreProviderTest {

  private static Properties properties(String... keysAndValues) {
    Properties p = new Properties();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return p;
  }

  private static String h2Url() {
    return "jdbc:h2:mem:provider-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
  }

  @Test
  void isFoundByServiceLoaderUnderTheNameJdbc() {
    assertThat(ServiceLoader.load(LeaseStoreProvider.class).stream().map(p -> p.get().name()))
        .contains("jdbc");
  }

  @Test
  void opensAWorkingStoreFromProperties() {
    Properties p =
        properties(
            JdbcLeaseStoreProvider.URL,
            h2Url(),
            JdbcLeaseStoreProvider.TABLE,
            "my_leases",
            JdbcLeaseStoreProvider.USERNAME,
            "sa");

    try (LeaseStore store = ElectionProperties.of(p).openStore()) {
      assertThat(store.describe()).isEqualTo("jdbc");
      assertThat(firstAcquire(store, "provider").isGranted()).isTrue();
      assertThat(store.read("provider").orElseThrow().holder()).isEqualTo("node-a");
      assertThat(store.describe()).isEqualTo("jdbc (H2)");
    }
  }

  @Test
  void takesTheUrlFromTheEnvironment() {
    ElectionProperties config =
        ElectionProperties.of(properties(), Map.of("ELECTION_JDBC_URL", h2Url()));

    try (LeaseStore store = new JdbcLeaseStoreProvider().open(config)) {
      assertThat(firstAcquire(store, "env").isGranted()).isTrue();
    }
  }

  @Test
  void refusesAMissingUrl() {
    assertThatThrownBy(() -> new JdbcLeaseStoreProvider().open(ElectionProperties.of(properties())))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.jdbc.url")
        .hasMessageContaining("ELECTION_JDBC_URL");
  }

  @Test
  void refusesAUrlNoDriverAcceptsWithoutShowingItsPassword() {
    Properties p =
        properties(
            JdbcLeaseStoreProvider.URL,
            "jdbc:nosuchdb://app:pw-secret@db.example:1/app?password=hunter2-secret");

    assertThatThrownBy(() -> new JdbcLeaseStoreProvider().open(ElectionProperties.of(p)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.jdbc.url")
        .hasMessageContaining("jdbc:nosuchdb://app:<hidden>@db.example:1/app?password=<hidden>")
        .hasMessageNotContaining("hunter2-secret")
        .hasMessageNotContaining("pw-secret");
  }

  @Test
  void refusesACallTimeoutAboveHalfTheRenewDeadline() {
    Properties p =
        properties(
            JdbcLeaseStoreProvider.URL,
            h2Url(),
            JdbcLeaseStoreProvider.CALL_TIMEOUT,
            "6s",
            ElectionProperties.RENEW_DEADLINE,
            "10s");

    assertThatThrownBy(() -> new JdbcLeaseStoreProvider().open(ElectionProperties.of(p)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.jdbc.call-timeout")
        .hasMessageContaining("6s")
        .hasMessageContaining("election.renew-deadline");
  }

  @Test
  void refusesATableNameThatIsNotAPlainIdentifier() {
    Properties p =
        properties(
            JdbcLeaseStoreProvider.URL,
            h2Url(),
            JdbcLeaseStoreProvider.TABLE,
            "leases; drop table x");

    assertThatThrownBy(() -> new JdbcLeaseStoreProvider().open(ElectionProperties.of(p)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.jdbc.table")
        .hasMessageContaining("'leases; drop table x'");
  }

  @Test
  void refusesAPoolTooSmallForListenAndWork() {
    Properties p =
        properties(JdbcLeaseStoreProvider.URL, h2Url(), JdbcLeaseStoreProvider.POOL_SIZE, "1");

    assertThatThrownBy(() -> new JdbcLeaseStoreProvider().open(ElectionProperties.of(p)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.jdbc.pool-size")
        .hasMessageContaining("from 2 to 100");
  }

  /**
   * The first call of a fresh store opens the pool's first connection and may outlast the call
   * timeout on a loaded machine; an elector would simply try again, and so does this test.
   */
  private static Acquisition firstAcquire(LeaseStore store, String election) {
    return await()
        .atMost(Duration.ofSeconds(60))
        .ignoreException(LeaseStoreException.class)
        .until(() -> store.tryAcquire(election, "node-a", Duration.ofSeconds(30)), a -> a != null);
  }
}
