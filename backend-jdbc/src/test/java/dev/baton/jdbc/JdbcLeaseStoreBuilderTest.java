package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import org.h2.jdbcx.JdbcDataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/** What the builder accepts; no database is contacted before the first call. */
class JdbcLeaseStoreBuilderTest {

  private static JdbcDataSource neverUsed() {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:never-used");
    return ds;
  }

  @Test
  void refusesADslContextOverASingleConnection() throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:h2:mem:single")) {
      assertThatThrownBy(() -> JdbcLeaseStore.builder(DSL.using(c, SQLDialect.H2)))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("single Connection")
          .hasMessageContaining("DataSource");
    }
  }

  @Test
  void refusesANonPositiveCallTimeout() {
    assertThatThrownBy(() -> JdbcLeaseStore.builder(neverUsed()).callTimeout(Duration.ZERO))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("callTimeout")
        .hasMessageContaining("callTimeout: 0s");
  }

  @Test
  void refusesASchemaThatIsNotAPlainIdentifier() {
    assertThatThrownBy(() -> JdbcLeaseStore.builder(neverUsed()).schema("app.x"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("schema")
        .hasMessageContaining("'app.x'");
  }

  @Test
  void refusesElectionNamesTheTableCannotHold() {
    try (JdbcLeaseStore store = JdbcLeaseStore.builder(neverUsed()).build()) {
      assertThatThrownBy(() -> store.tryAcquire("e".repeat(256), "node-a", Duration.ofSeconds(1)))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("election")
          .hasMessageContaining("256");
      assertThatThrownBy(() -> store.checkElectionName(""))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("1 to 255 characters");
      store.checkElectionName("e".repeat(255));
      assertThat(store.describe()).isEqualTo("jdbc");
    }
  }
}
