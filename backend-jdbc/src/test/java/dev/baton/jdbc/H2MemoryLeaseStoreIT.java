package dev.baton.jdbc;

import dev.baton.testservers.H2TcpServer;
import java.net.InetSocketAddress;
import java.sql.SQLException;
import org.junit.jupiter.api.Nested;

/** The contract on an in-memory H2 database shared by two pools of this JVM. */
class H2MemoryLeaseStoreIT extends H2LeaseStoreContract {

  @Override
  String url() {
    return "jdbc:h2:mem:baton-it-" + suffix + ";DB_CLOSE_DELAY=-1";
  }

  /** Only an admin may set DB_CLOSE_DELAY; the database lives on anyway. */
  @Override
  String unprivilegedUrl() {
    return "jdbc:h2:mem:baton-it-" + suffix;
  }

  /** An H2 TCP server in this JVM serves the in-memory database the two pools share. */
  @Nested
  class ThroughAProxyToH2 extends ThroughAProxy {
    @Override
    InetSocketAddress server() throws SQLException {
      H2TcpServer server = H2TcpServer.start();
      closeAtEnd.push(server);
      return server.address();
    }
  }

  @Override
  String urlOnPort(int port) {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:baton-it-" + suffix;
  }
}
