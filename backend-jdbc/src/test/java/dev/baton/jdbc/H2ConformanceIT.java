package dev.baton.jdbc;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;
import dev.baton.testservers.H2TcpServer;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

/**
 * The conformance suite on an in-memory H2 database served by an H2 TCP server in this JVM, each
 * node through its own proxy, so cuts and blackholes are real socket faults as on the other
 * databases; followers poll.
 */
class H2ConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new JdbcConformanceFixture() {
      private final String database = "mem:baton-conformance-" + suffix;

      /** Keeps the in-memory database open, and shuts it down at the end. */
      private Connection keeper;

      private H2TcpServer tcp;

      @Override
      InetSocketAddress server() throws Exception {
        keeper =
            DriverManager.getConnection("jdbc:h2:" + database + ";DB_CLOSE_DELAY=-1", user(), "");
        tcp = H2TcpServer.start();
        return tcp.address();
      }

      @Override
      String url(InetSocketAddress address) {
        return "jdbc:h2:tcp://127.0.0.1:" + address.getPort() + "/" + database;
      }

      @Override
      String user() {
        return "sa";
      }

      @Override
      void stopServer() throws Exception {
        if (keeper == null) {
          return;
        }
        try (Connection c = keeper;
            Statement s = c.createStatement()) {
          s.execute("shutdown");
        } finally {
          if (tcp != null) {
            tcp.close();
          }
        }
      }
    };
  }
}
