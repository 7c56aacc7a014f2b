package dev.baton.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.conformance.FaultProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Spring Integration's {@code LockRegistryLeaderInitiator} on a {@code JdbcLockRegistry} over
 * PostgreSQL, wired as a Spring application would wire the beans (here by hand, without a context):
 * a {@code DefaultLockRepository} per node with the lock's time-to-live set to the lease duration
 * and the PostgreSQL {@code ON CONFLICT DO NOTHING} insert its javadoc recommends, the initiator's
 * default heartbeat (500 ms) and busy wait (50 ms), and a HikariCP pool with HikariCP's (Spring
 * Boot's) defaults except its size.
 */
final class SpringLeaderContender implements Contender {

  static final String TABLE_PREFIX = "BENCH_INT_";

  private final Settings settings;
  private final String version;

  SpringLeaderContender(Settings settings, String postgresVersion) throws SQLException {
    this.settings = settings;
    this.version = postgresVersion;
    createTable();
  }

  /** Spring Integration's schema-postgresql.sql for the lock table, with the benchmark's prefix. */
  private static void createTable() throws SQLException {
    try (Connection c =
            DriverManager.getConnection(
                Servers.postgresUrl(Servers.POSTGRES.getPort()), Servers.POSTGRES_USER, "");
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS "
              + TABLE_PREFIX
              + "LOCK ("
              + " LOCK_KEY CHAR(36) NOT NULL,"
              + " REGION VARCHAR(100) NOT NULL,"
              + " CLIENT_ID CHAR(36),"
              + " CREATED_DATE TIMESTAMP NOT NULL,"
              + " constraint "
              + TABLE_PREFIX
              + "LOCK_PK primary key (LOCK_KEY, REGION))");
      s.executeUpdate("DELETE FROM " + TABLE_PREFIX + "LOCK");
    }
  }

  @Override
  public String name() {
    return "Spring Integration";
  }

  @Override
  public String server() {
    return version + " at 127.0.0.1:5432 (the same server)";
  }

  @Override
  public String library() {
    return "Spring Integration "
        + Versions.of(
            LockRegistryLeaderInitiator.class,
            "org.springframework.integration",
            "spring-integration-core");
  }

  @Override
  public Map<String, String> settings() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("lock time-to-live (the lease)", settings.leaseDuration().toMillis() + " ms");
    s.put(
        "heartbeat / busy wait",
        LockRegistryLeaderInitiator.DEFAULT_HEART_BEAT_TIME
            + " / "
            + LockRegistryLeaderInitiator.DEFAULT_BUSY_WAIT_TIME
            + " ms (defaults)");
    s.put("JdbcLockRegistry idle between tries", "100 ms (default)");
    s.put(
        "insert",
        "INSERT ... ON CONFLICT DO NOTHING (the PostgreSQL hint in DefaultLockRepository's javadoc)");
    s.put("pool", "HikariCP defaults (connection timeout 30 s), 2 connections");
    return s;
  }

  @Override
  public String requestsCountedAs() {
    return "JDBC round trips at the driver (statements, commits, rollbacks, validity checks, including the pool's)";
  }

  @Override
  public Duration leaseDuration() {
    return settings.leaseDuration();
  }

  @Override
  public Node newNode(String election, String candidate, Timeline timeline) {
    FaultProxy proxy = FaultProxy.start(Servers.POSTGRES);
    CountingDataSource counting =
        new CountingDataSource(Servers.postgresUrl(proxy.port()), Servers.POSTGRES_USER, "");
    HikariConfig pool = new HikariConfig();
    pool.setPoolName("spring-bench-" + candidate);
    pool.setDataSource(counting);
    pool.setMaximumPoolSize(2);
    pool.setInitializationFailTimeout(-1);
    HikariDataSource dataSource = new HikariDataSource(pool);
    try {
      DefaultLockRepository repository =
          new DefaultLockRepository(dataSource, UUID.randomUUID().toString());
      repository.setPrefix(TABLE_PREFIX);
      repository.setTimeToLive((int) settings.leaseDuration().toMillis());
      repository.setInsertQuery(repository.getInsertQuery() + " ON CONFLICT DO NOTHING");
      repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
      repository.afterPropertiesSet();
      repository.afterSingletonsInstantiated();
      return new InitiatorNode(
          candidate, timeline, proxy, counting, dataSource, repository, election);
    } catch (RuntimeException e) {
      dataSource.close();
      proxy.close();
      throw e;
    }
  }

  private static final class InitiatorNode extends Node {
    private final HikariDataSource dataSource;
    private final DefaultLockRepository repository;
    private final LockRegistryLeaderInitiator initiator;

    InitiatorNode(
        String id,
        Timeline timeline,
        FaultProxy proxy,
        CountingDataSource counting,
        HikariDataSource dataSource,
        DefaultLockRepository repository,
        String election) {
      super(id, timeline, proxy, Optional.of(proxy), counting::roundTrips);
      this.dataSource = dataSource;
      this.repository = repository;
      this.initiator =
          new LockRegistryLeaderInitiator(
              new JdbcLockRegistry(repository),
              new AbstractCandidate(id, election) {
                @Override
                public void onGranted(Context context) {
                  elected();
                }

                @Override
                public void onRevoked(Context context) {
                  revoked();
                }
              });
    }

    @Override
    void start() {
      repository.start();
      initiator.start();
    }

    /**
     * {@code stop()}: interrupts the election thread, which unlocks (deletes the row) on its way
     * out.
     */
    @Override
    void leave() {
      initiator.stop();
    }

    @Override
    boolean believesLeader() {
      return initiator.getContext().isLeader();
    }

    @Override
    void closeClient() {
      try {
        initiator.stop();
        repository.stop();
      } finally {
        dataSource.close();
      }
    }
  }
}
