package dev.baton.benchmarks;

import dev.baton.conformance.NpmServer;
import dev.baton.testservers.ConsulServers;
import dev.baton.testservers.H2TcpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The servers of one run, started when first needed and stopped by {@link #close()}: ZooKeeper and
 * the Kubernetes mock in this JVM, one etcd member as a child process, H2 in server mode, dynalite
 * and Azurite as node processes, a Consul dev agent as a child process. PostgreSQL and MariaDB are
 * the machine's own (127.0.0.1:5432, user postgres, database test; 127.0.0.1:3306, user root, empty
 * password, database test).
 */
final class Servers implements AutoCloseable {

  static final InetSocketAddress POSTGRES =
      new InetSocketAddress(InetAddress.getLoopbackAddress(), 5432);
  static final InetSocketAddress MARIADB =
      new InetSocketAddress(InetAddress.getLoopbackAddress(), 3306);
  static final String POSTGRES_USER = "postgres";
  static final String MARIADB_USER = "root";

  private final List<AutoCloseable> started = new ArrayList<>();
  private ZooKeeperServerInJvm zookeeper;
  private EtcdServer etcd;
  private KubernetesMock kubernetes;
  private H2TcpServer h2;
  private NpmServer dynalite;
  private NpmServer azurite;
  private ConsulServers consul;

  synchronized ZooKeeperServerInJvm zookeeper() {
    if (zookeeper == null) {
      zookeeper = keep(ZooKeeperServerInJvm.start());
    }
    return zookeeper;
  }

  /** The etcd member, if a contender has started it. */
  synchronized java.util.Optional<EtcdServer> etcdIfStarted() {
    return java.util.Optional.ofNullable(etcd);
  }

  synchronized EtcdServer etcd() {
    if (etcd == null) {
      etcd = keep(EtcdServer.start());
    }
    return etcd;
  }

  synchronized KubernetesMock kubernetes() {
    if (kubernetes == null) {
      kubernetes = keep(KubernetesMock.start());
    }
    return kubernetes;
  }

  synchronized H2TcpServer h2() {
    if (h2 == null) {
      try {
        h2 =
            keep(
                H2TcpServer.startWithInMemoryDatabase(
                    Backends.H2_DATABASE.substring("mem:".length())));
      } catch (SQLException e) {
        throw new IllegalStateException("cannot start H2's TCP server", e);
      }
    }
    return h2;
  }

  /** A Consul dev agent on free loopback ports, from tools/consul/bin/consul. */
  synchronized ConsulServers consul() {
    if (consul == null) {
      consul = keep(ConsulServers.dev());
    }
    return consul;
  }

  /** dynalite (npm) on a free loopback port, in memory, from tools/dynalite. */
  synchronized NpmServer dynalite() {
    if (dynalite == null) {
      dynalite = keep(NpmServer.dynalite());
    }
    return dynalite;
  }

  /** Azurite's blob service (npm) on a free loopback port, in memory, from tools/azurite. */
  synchronized NpmServer azurite() {
    if (azurite == null) {
      azurite = keep(NpmServer.azuriteBlob());
    }
    return azurite;
  }

  /** Why an npm test server cannot run, if it cannot: no node, or its package is not installed. */
  static Optional<String> npmServerMissing(String tool, String script) {
    return NpmServer.missing(tool, script);
  }

  private <T extends AutoCloseable> T keep(T server) {
    started.add(server);
    return server;
  }

  static boolean reachable(InetSocketAddress address) {
    try (Socket s = new Socket()) {
      s.connect(address, 2_000);
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  static String postgresUrl(int port) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/test";
  }

  static String mariadbUrl(int port) {
    return "jdbc:mariadb://127.0.0.1:" + port + "/test";
  }

  /** {@code SELECT version()} of the database at {@code url}, shortened for the report. */
  static Optional<String> databaseVersion(String url, String user) {
    try (Connection c = DriverManager.getConnection(url, user, "");
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT version()")) {
      if (!r.next()) {
        return Optional.empty();
      }
      String v = r.getString(1);
      return Optional.of(v.contains(" on ") ? v.substring(0, v.indexOf(" on ")) : v);
    } catch (SQLException e) {
      return Optional.empty();
    }
  }

  /**
   * Empties {@code table} at {@code url} when it exists: the benchmark's own table, from earlier
   * runs.
   */
  static void emptyTable(String url, String user, String table) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, user, "")) {
      DatabaseMetaData meta = c.getMetaData();
      boolean exists = false;
      for (String name : List.of(table, table.toUpperCase(java.util.Locale.ROOT))) {
        try (ResultSet r = meta.getTables(c.getCatalog(), null, name, null)) {
          exists |= r.next();
        }
      }
      if (exists) {
        try (Statement s = c.createStatement()) {
          s.executeUpdate("DELETE FROM " + table);
        }
      }
    }
  }

  /**
   * Stops every server, the last started first; one that fails to stop does not keep the others
   * running.
   */
  @Override
  public synchronized void close() {
    List<String> failures = new ArrayList<>();
    for (int i = started.size() - 1; i >= 0; i--) {
      AutoCloseable server = started.get(i);
      try {
        server.close();
      } catch (Exception e) {
        failures.add(server.getClass().getSimpleName() + ": " + e);
      }
    }
    started.clear();
    if (!failures.isEmpty()) {
      System.err.println("stopping the benchmark's servers: " + String.join("; ", failures));
    }
  }
}
