package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.conformance.FrozenServerScenario;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import dev.baton.testservers.JdbcServer;
import dev.baton.testservers.ServerMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL frozen ({@code docker pause}: every server process stopped, every connection open,
 * nothing answers) for longer than the lease while three electors, each on its own pool, run. The
 * whole store is frozen, so the leader must step down by its renew deadline and nobody may be
 * granted until the thaw; then one elector leads again, none restarted. A fault no proxy can make:
 * a cut or blackholed connection is not a server that accepted the request and never answers.
 * Needs the container mode ({@code -Dbaton.servers=containers}): the machine's own server cannot
 * be frozen by a test.
 */
class PostgresServerFrozenIT {

  private static final Timings TIMINGS = Timings.SHORT;
  private static final Duration CALL_TIMEOUT = Duration.ofMillis(700);

  private final List<AutoCloseable> closeAtEnd = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeAtEnd.size() - 1; i >= 0; i--) {
      closeAtEnd.get(i).close();
    }
  }

  @Test
  void postgresFrozenLongerThanTheLeaseCostsTheLeaderItsTermAndNothingElse() {
    assumeTrue(ServerMode.containers(), "freezes a PostgreSQL container: run with -D" + ServerMode.PROPERTY + "=containers");
    JdbcServer postgres = JdbcServer.postgres();
    closeAtEnd.add(postgres);
    List<LeaseStore> stores = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      HikariConfig config = new HikariConfig();
      config.setPoolName("frozen-postgres-" + i);
      config.setJdbcUrl(postgres.url());
      config.setUsername(postgres.user());
      config.setMaximumPoolSize(3);
      config.setConnectionTimeout(500);
      HikariDataSource pool = new HikariDataSource(config);
      closeAtEnd.add(pool);
      JdbcLeaseStore store = JdbcLeaseStore.builder(pool).callTimeout(CALL_TIMEOUT).build();
      closeAtEnd.add(store);
      stores.add(store);
    }
    FrozenServerScenario scenario = new FrozenServerScenario("frozen-postgres", TIMINGS, stores);
    closeAtEnd.add(scenario);

    FrozenServerScenario.Figures figures = scenario.freezeLongerThanTheLease(leader -> postgres, true);

    assertThat(figures.keptTheTerm()).isFalse();
  }
}
