package dev.baton.testservers;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.h2.tools.Server;

/**
 * H2's TCP server in this JVM on an ephemeral port, so that H2 is reached over a socket (and
 * through a fault proxy) like the other databases. H2 binds where the system property {@code
 * h2.bindAddress} says, read once when H2 loads; the tests' failsafe configuration and the
 * benchmarks' main set it to 127.0.0.1, and a server would otherwise listen on every interface, so
 * starting without it is refused.
 */
public final class H2TcpServer implements AutoCloseable {

  private final Server server;
  // Open while the server holds an in-memory database: H2 drops one when its last connection goes.
  private final Connection holder;

  private H2TcpServer(Server server, Connection holder) {
    this.server = server;
    this.holder = holder;
  }

  /** A server for the databases already open in this JVM; it creates none. */
  public static H2TcpServer start() throws SQLException {
    requireLoopback();
    return new H2TcpServer(Server.createTcpServer("-tcpPort", "0").start(), null);
  }

  /**
   * A server that creates the in-memory database {@code name} and keeps it until {@link #close},
   * for clients in other JVMs or that come and go.
   */
  public static H2TcpServer startWithInMemoryDatabase(String name) throws SQLException {
    requireLoopback();
    Server server = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
    try {
      Connection holder =
          DriverManager.getConnection(url(server.getPort(), "mem:" + name), "sa", "");
      return new H2TcpServer(server, holder);
    } catch (SQLException | RuntimeException e) {
      server.stop();
      throw e;
    }
  }

  /** The JDBC URL of {@code database} (such as {@code mem:bench}) on a server at {@code port}. */
  public static String url(int port, String database) {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/" + database;
  }

  public InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort());
  }

  /** H2's version, as reports print it. */
  public static String version() {
    return org.h2.engine.Constants.FULL_VERSION;
  }

  @Override
  public void close() {
    try {
      if (holder != null) {
        holder.close();
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot close the connection that held H2's in-memory database", e);
    } finally {
      server.stop();
    }
  }

  private static void requireLoopback() {
    if (!"127.0.0.1".equals(System.getProperty("h2.bindAddress"))) {
      throw new IllegalStateException(
          "set -Dh2.bindAddress=127.0.0.1 before H2 loads, so that its TCP server listens on loopback only");
    }
  }
}
