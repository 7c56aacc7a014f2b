package dev.baton.jdbc;

import static org.awaitility.Awaitility.await;

import dev.baton.conformance.ProxiedServerFixture;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the conformance fixtures of the three databases share: every node opens its store with the
 * provider, as an application would, on a URL that points at the node's own proxy, and all nodes
 * share one lease table of this fixture's own, dropped at the end.
 */
abstract class JdbcConformanceFixture extends ProxiedServerFixture {

  /**
   * About a third of the suite's renew deadline (2 s), so a call through a blackhole fails well
   * before it.
   */
  static final Duration CALL_TIMEOUT = Duration.ofMillis(700);

  final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
  private final String table = "baton_conformance_" + suffix;
  private final Map<String, LeaseStore> opened = new ConcurrentHashMap<>();

  /** Reaches (or starts) the database and returns its own address. */
  abstract InetSocketAddress server() throws Exception;

  /** A JDBC URL of the database at {@code address}: a node's proxy, or the server itself. */
  abstract String url(InetSocketAddress address);

  abstract String user();

  /** Stops what {@link #server()} started, after the table was dropped. */
  void stopServer() throws Exception {}

  @Override
  protected final List<InetSocketAddress> startServers() throws Exception {
    return List.of(server());
  }

  @Override
  protected LeaseStore openStore(String node, List<InetSocketAddress> through) {
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, url(through.get(0)));
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, user());
    p.setProperty(JdbcLeaseStoreProvider.TABLE, table);
    p.setProperty(JdbcLeaseStoreProvider.CALL_TIMEOUT, CALL_TIMEOUT.toMillis() + "ms");
    p.setProperty(ElectionProperties.RENEW_DEADLINE, timings().renewDeadline().toMillis() + "ms");
    // The store closes the pool the provider built for it; the fixture closes the store.
    LeaseStore store = new JdbcLeaseStoreProvider().open(ElectionProperties.of(p));
    // Connected and set up (the table found or created) before the scenario starts its clock: a
    // fresh pool's first connection may not fit into one call timeout on a busy machine.
    awaitAnswer(node, store);
    opened.put(node, store);
    return store;
  }

  /**
   * Heals every proxy, then waits until every node's store answers again. A pool whose connections
   * were all cut reconnects on its own, but HikariCP retries a failed connect with a backoff of up
   * to seconds, so the first calls after a heal may still find it empty; a scenario that calls a
   * store directly at its start must not inherit that from the one before.
   */
  @Override
  public void restore() throws Exception {
    super.restore();
    opened.forEach(JdbcConformanceFixture::awaitAnswer);
  }

  private static void awaitAnswer(String node, LeaseStore store) {
    await("node " + node + " reaches the database")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50))
        .ignoreExceptionsInstanceOf(LeaseStoreException.class)
        .until(() -> store.read("conformance-warm-up").isEmpty());
  }

  @Override
  public boolean canDeleteLeases() {
    return true;
  }

  /**
   * Deletes the election's row by hand, straight on the database. That notifies nobody, not even on
   * PostgreSQL, whose leaders hear grants and releases only (PostgresLeaseStoreIT checks those): so
   * on every database here the leader learns at its next renewal.
   */
  @Override
  public void deleteLease(String election) throws SQLException {
    try (Connection c = DriverManager.getConnection(url(serverAddresses().get(0)), user(), "");
        PreparedStatement s = c.prepareStatement("delete from " + table + " where election = ?")) {
      s.setString(1, election);
      s.executeUpdate();
    }
  }

  @Override
  protected final void stopServers() throws Exception {
    try {
      dropTable();
    } finally {
      stopServer();
    }
  }

  private void dropTable() throws SQLException {
    if (serverAddresses() == null) {
      return; // the server was never reached
    }
    try (Connection c = DriverManager.getConnection(url(serverAddresses().get(0)), user(), "");
        Statement s = c.createStatement()) {
      s.execute("drop table if exists " + table);
    }
  }
}
