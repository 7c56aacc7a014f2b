package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.conformance.CloseAtEnd;
import dev.baton.conformance.FrozenServerScenario;
import dev.baton.conformance.ServerPorts;
import dev.baton.conformance.ServerProcess;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fault 2 of issue 16 on H2: the H2 TCP server, run as a child process, frozen with SIGSTOP for
 * longer than the lease while three electors (each on its own pool) run. The whole store is frozen,
 * so the leader must step down by its renew deadline and nobody may be granted until the thaw;
 * after SIGCONT one elector leads again, none restarted. The elector's own deadline ends the term:
 * the store's calls to the frozen server last until the thaw (see docs/jdbc.md).
 */
class H2ServerFrozenIT {

  private static final Timings TIMINGS = Timings.SHORT;
  private static final Duration CALL_TIMEOUT = Duration.ofMillis(700);

  @TempDir Path dir;

  private final CloseAtEnd closeAtEnd = new CloseAtEnd();

  @AfterEach
  void closeAll() throws Exception {
    closeAtEnd.close();
  }

  @Test
  void theH2ServerFrozenLongerThanTheLeaseCostsTheLeaderItsTermAndNothingElse() {
    int port = ServerPorts.belowEphemeralRange();
    ServerProcess h2 =
        ServerProcess.start(
            "H2 TCP server",
            dir.resolve("h2-server.log"),
            List.of("-Dh2.bindAddress=127.0.0.1"),
            "org.h2.tools.Server",
            List.of(
                "-tcp",
                "-tcpPort",
                Integer.toString(port),
                "-ifNotExists",
                "-baseDir",
                dir.toString()),
            port);
    closeAtEnd.add(h2);
    String url = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:frozen;DB_CLOSE_DELAY=-1";
    List<LeaseStore> stores = storesOnOwnPools("frozen-h2", url, "sa", closeAtEnd);
    // H2's client ignores setNetworkTimeout and abort (both do nothing in H2 2.x), so a call to
    // the frozen server returns only at the thaw: calls may last the whole freeze here.
    FrozenServerScenario scenario =
        new FrozenServerScenario(
            "frozen-h2", TIMINGS, stores, TIMINGS.leaseDuration().plus(TIMINGS.allowance()));
    closeAtEnd.add(scenario);

    FrozenServerScenario.Figures figures = scenario.freezeLongerThanTheLease(leader -> h2, true);

    assertThat(figures.keptTheTerm()).isFalse();
  }

  /**
   * Three stores, each on a small pool of its own, closed (with their pools) through {@code
   * closeAtEnd}.
   */
  static List<LeaseStore> storesOnOwnPools(
      String name, String url, String user, CloseAtEnd closeAtEnd) {
    List<LeaseStore> stores = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      HikariConfig config = new HikariConfig();
      config.setPoolName(name + "-" + i);
      config.setJdbcUrl(url);
      config.setUsername(user);
      config.setMaximumPoolSize(3);
      config.setConnectionTimeout(500);
      HikariDataSource pool = new HikariDataSource(config);
      closeAtEnd.add(pool);
      JdbcLeaseStore store = JdbcLeaseStore.builder(pool).callTimeout(CALL_TIMEOUT).build();
      closeAtEnd.add(store);
      stores.add(store);
    }
    return stores;
  }
}
