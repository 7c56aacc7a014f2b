package dev.baton.jdbc;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;
import dev.baton.conformance.RequiredServer;
import java.net.InetSocketAddress;

/** The conformance suite on MariaDB at 127.0.0.1:3306, each node through its own proxy; followers poll. */
class MariaDbConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new JdbcConformanceFixture() {
      @Override
      InetSocketAddress server() {
        RequiredServer.requireTcp("MariaDB", "127.0.0.1", 3306, "sudo service mariadb start (user root, empty password, database test)");
        return new InetSocketAddress("127.0.0.1", 3306);
      }

      @Override
      String url(InetSocketAddress address) {
        return "jdbc:mariadb://127.0.0.1:" + address.getPort() + "/test";
      }

      @Override
      String user() {
        return "root";
      }
    };
  }
}
