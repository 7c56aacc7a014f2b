package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.CloseAtEnd;
import dev.baton.conformance.FrozenServerScenario;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import dev.baton.testservers.JdbcServer;
import dev.baton.testservers.ServerMode;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL frozen ({@code docker pause}: every server process stopped, every connection open,
 * nothing answers) for longer than the lease while three electors, each on its own pool, run. The
 * whole store is frozen, so the leader must step down by its renew deadline and nobody may be
 * granted until the thaw; then one elector leads again, none restarted. A fault no proxy can make:
 * a cut or blackholed connection is not a server that accepted the request and never answers. Needs
 * the container mode ({@code -Dbaton.servers=containers}): the machine's own server cannot be
 * frozen by a test.
 */
class PostgresServerFrozenIT {

  private static final Timings TIMINGS = Timings.SHORT;

  private final CloseAtEnd closeAtEnd = new CloseAtEnd();

  @AfterEach
  void closeAll() throws Exception {
    closeAtEnd.close();
  }

  @Test
  void postgresFrozenLongerThanTheLeaseCostsTheLeaderItsTermAndNothingElse() {
    ServerMode.requireContainers();
    JdbcServer postgres = JdbcServer.postgres();
    closeAtEnd.add(postgres);
    // The same three pools as on H2; PostgreSQL's driver, unlike H2's, times a call out on its own.
    List<LeaseStore> stores =
        H2ServerFrozenIT.storesOnOwnPools(
            "frozen-postgres", postgres.url(), postgres.user(), closeAtEnd);
    FrozenServerScenario scenario = new FrozenServerScenario("frozen-postgres", TIMINGS, stores);
    closeAtEnd.add(scenario);

    FrozenServerScenario.Figures figures =
        scenario.freezeLongerThanTheLease(leader -> postgres, true);

    assertThat(figures.keptTheTerm()).isFalse();
  }
}
