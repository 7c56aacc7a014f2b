package dev.baton.benchmarks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.h2.tools.Server;

/**
 * H2 in server mode on loopback with one in-memory database, so that H2 candidates, like the
 * others, reach their database over TCP through their own proxy. (Embedded H2, the demo's default,
 * has no network to cut.) The system property {@code h2.bindAddress=127.0.0.1}, set by {@link Main}
 * before H2 loads, keeps the listener on loopback.
 */
final class H2Server implements AutoCloseable {

  static final String DATABASE = "mem:baton-bench";

  private final Server server;
  private final Connection keepAlive;

  private H2Server(Server server, Connection keepAlive) {
    this.server = server;
    this.keepAlive = keepAlive;
  }

  static H2Server start() {
    if (!"127.0.0.1".equals(System.getProperty("h2.bindAddress"))) {
      throw new IllegalStateException(
          "set -Dh2.bindAddress=127.0.0.1 before H2 loads, so its server listens on loopback only");
    }
    try {
      int port = EtcdServer.freePort();
      Server server =
          Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists").start();
      // The in-memory database lives as long as one connection to it is open.
      Connection keep = DriverManager.getConnection(url(port), "sa", "");
      return new H2Server(server, keep);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot start H2's TCP server", e);
    }
  }

  static String url(int port) {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/" + DATABASE + ";DB_CLOSE_DELAY=-1";
  }

  InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort());
  }

  String version() {
    return org.h2.engine.Constants.FULL_VERSION;
  }

  @Override
  public void close() {
    try {
      keepAlive.close();
    } catch (SQLException e) {
      // the server stops anyway
    }
    server.stop();
  }
}
