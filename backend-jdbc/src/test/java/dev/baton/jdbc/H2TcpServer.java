package dev.baton.jdbc;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.sql.SQLException;
import org.h2.tools.Server;

/**
 * An H2 TCP server in this JVM on an ephemeral port, so that H2 can be reached over a socket (and
 * through a fault proxy) like the other databases. It serves databases already open in this JVM
 * only (no {@code -ifNotExists}); failsafe's {@code h2.bindAddress} keeps it on 127.0.0.1.
 */
final class H2TcpServer implements AutoCloseable {

  private final Server server;

  private H2TcpServer(Server server) {
    this.server = server;
  }

  static H2TcpServer start() throws SQLException {
    return new H2TcpServer(Server.createTcpServer("-tcpPort", "0").start());
  }

  InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort());
  }

  @Override
  public void close() {
    server.stop();
  }
}
