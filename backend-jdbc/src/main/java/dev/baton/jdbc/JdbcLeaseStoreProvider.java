package dev.baton.jdbc;

import static java.util.Objects.requireNonNull;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.SQLExceptionOverride;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import dev.baton.election.UrlSecrets;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Opens a {@link JdbcLeaseStore} for {@code election.backend=jdbc} on a small HikariCP pool built
 * from {@code election.jdbc.*} and closed with the store.
 *
 * <p>Keys: {@code url} (required), {@code username}, {@code password}, {@code table} (default
 * {@code baton_lease}), {@code schema}, {@code create-table} (default true), {@code call-timeout}
 * (at most half of {@code election.renew-deadline}; default half of it, at most 3s: see {@link
 * CallTimeout}), {@code pool-size} (default 4). The pool waits at most half the call timeout for a
 * connection, bounds connecting and cancelling by the call timeout where the driver allows
 * (PostgreSQL {@code connectTimeout}, {@code loginTimeout}, {@code cancelSignalTimeout};
 * MariaDB/MySQL {@code connectTimeout}; H2 over TCP {@code NETWORK_TIMEOUT}) unless the URL sets
 * them, and does not connect before the first call, so a store opens while the database is down and
 * works once it is back.
 */
public final class JdbcLeaseStoreProvider implements LeaseStoreProvider {

  public static final String NAME = "jdbc";
  public static final String URL = "election.jdbc.url";
  public static final String USERNAME = "election.jdbc.username";
  public static final String PASSWORD = "election.jdbc.password";
  public static final String TABLE = "election.jdbc.table";
  public static final String SCHEMA = "election.jdbc.schema";
  public static final String CREATE_TABLE = "election.jdbc.create-table";
  public static final String CALL_TIMEOUT = "election.jdbc.call-timeout";
  public static final String POOL_SIZE = "election.jdbc.pool-size";

  static final int DEFAULT_POOL_SIZE = 4;
  private static final AtomicInteger POOLS = new AtomicInteger();

  /** HikariCP's floor for its connection and validation timeouts. */
  private static final long MIN_POOL_TIMEOUT_MILLIS = 250;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of(URL, USERNAME, PASSWORD, TABLE, SCHEMA, CREATE_TABLE, CALL_TIMEOUT, POOL_SIZE);
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    requireNonNull(properties, "properties");
    String url = properties.require(URL);
    checkDriver(url);
    Duration callTimeout = CallTimeout.read(properties, CALL_TIMEOUT);
    // Checked here so that a bad name fails with its key; the builder checks again.
    String table =
        LeaseTable.checkIdentifier(
            TABLE, properties.get(TABLE).orElse(JdbcLeaseStore.DEFAULT_TABLE));
    String schema =
        properties.get(SCHEMA).map(s -> LeaseTable.checkIdentifier(SCHEMA, s)).orElse(null);
    boolean createTable = properties.bool(CREATE_TABLE, true);
    // One connection serves PostgreSQL's LISTEN for as long as the store is open.
    int poolSize = properties.integer(POOL_SIZE, DEFAULT_POOL_SIZE, 2, 100);

    HikariDataSource pool =
        new HikariDataSource(poolConfig(properties, url, callTimeout, poolSize));
    try {
      JdbcLeaseStore.Builder builder =
          JdbcLeaseStore.builder(pool)
              .table(table)
              .createTable(createTable)
              .callTimeout(callTimeout)
              .closesClient();
      if (schema != null) {
        builder.schema(schema);
      }
      return builder.build();
    } catch (RuntimeException e) {
      pool.close();
      throw e;
    }
  }

  private static HikariConfig poolConfig(
      ElectionProperties properties, String url, Duration callTimeout, int poolSize) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("baton-jdbc-" + POOLS.incrementAndGet());
    config.setJdbcUrl(url);
    properties.get(USERNAME).ifPresent(config::setUsername);
    properties.get(PASSWORD).ifPresent(config::setPassword);
    config.setMaximumPoolSize(poolSize);
    // Two: on PostgreSQL the LISTEN holds one for good, and the calls should find the other open
    // rather than wait for the pool, which opens one connection at a time, 30 ms apart.
    config.setMinimumIdle(2);
    // Waiting for a connection (at most the connection timeout, plus one validation of an idle
    // connection) ends within the call timeout, so that neither can hold a renewal past the renew
    // deadline: the store bounds what follows by the same deadline.
    long timeoutMillis = Math.max(MIN_POOL_TIMEOUT_MILLIS, callTimeout.toMillis() / 2);
    config.setConnectionTimeout(timeoutMillis);
    config.setValidationTimeout(Math.max(MIN_POOL_TIMEOUT_MILLIS, callTimeout.toMillis() / 4));
    driverTimeouts(url, callTimeout).forEach(config::addDataSourceProperty);
    config.setExceptionOverride(new EvictBrokenH2Connections());
    // Do not connect while opening: the store opens with the database down and recovers later.
    config.setInitializationFailTimeout(-1);
    return config;
  }

  /**
   * Driver settings that keep connecting and cancelling within the call timeout, for the databases
   * whose defaults do not (ten seconds or more, or no limit): only those the URL does not set
   * itself.
   */
  static Map<String, String> driverTimeouts(String url, Duration callTimeout) {
    long millis = callTimeout.toMillis();
    String seconds = String.valueOf(Math.max(1, (millis + 999) / 1000));
    Map<String, String> settings = new LinkedHashMap<>();
    if (url.startsWith("jdbc:postgresql:")) {
      settings.put("connectTimeout", seconds);
      settings.put("loginTimeout", seconds);
      // A query-timeout cancel travels on a new connection, which a partition blocks as well.
      settings.put("cancelSignalTimeout", seconds);
    } else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
      settings.put("connectTimeout", String.valueOf(millis));
    } else if (url.startsWith("jdbc:h2:tcp:") || url.startsWith("jdbc:h2:ssl:")) {
      // H2's client ignores setNetworkTimeout: this read timeout holds for every round trip.
      settings.put("NETWORK_TIMEOUT", String.valueOf(millis));
    }
    String lowerUrl = url.toLowerCase(Locale.ROOT);
    settings.keySet().removeIf(key -> lowerUrl.contains(key.toLowerCase(Locale.ROOT) + "="));
    return settings;
  }

  /**
   * HikariCP drops a connection whose error says it is broken (SQLState class 08), but H2 reports a
   * broken or closed TCP session with codes of its own. Without this the pool would keep handing
   * out such a dead connection to calls that come within its half-second validation bypass, and a
   * store polled that often would never recover from a partition.
   */
  static final class EvictBrokenH2Connections implements SQLExceptionOverride {

    /** H2: connection broken, database (session) closed, database called at shutdown. */
    private static final Set<String> BROKEN = Set.of("90067", "90098", "90121");

    // java.lang.Override: the interface's own Override enum shadows the annotation's simple name.
    @java.lang.Override
    public SQLExceptionOverride.Override adjudicate(SQLException e) {
      return BROKEN.contains(e.getSQLState())
          ? SQLExceptionOverride.Override.MUST_EVICT
          : SQLExceptionOverride.Override.CONTINUE_EVICT;
    }
  }

  private static void checkDriver(String url) {
    try {
      DriverManager.getDriver(url);
    } catch (SQLException e) {
      throw new ConfigurationException(
          URL
              + ": no JDBC driver accepts '"
              + UrlSecrets.redact(url)
              + "'; backend-jdbc brings drivers for"
              + " jdbc:postgresql:, jdbc:mariadb: and jdbc:h2: URLs (and jdbc:mysql: with the MySQL driver added)");
    }
  }
}
