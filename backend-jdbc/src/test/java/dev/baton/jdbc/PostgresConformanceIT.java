package dev.baton.jdbc;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;
import dev.baton.conformance.RequiredServer;
import java.net.InetSocketAddress;

/** The conformance suite on PostgreSQL at 127.0.0.1:5432, each node through its own proxy; followers LISTEN. */
class PostgresConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new JdbcConformanceFixture() {
      @Override
      InetSocketAddress server() {
        RequiredServer.requireTcp("PostgreSQL", "127.0.0.1", 5432, "sudo service postgresql start (user postgres with trust, database test)");
        return new InetSocketAddress("127.0.0.1", 5432);
      }

      @Override
      String url(InetSocketAddress address) {
        return "jdbc:postgresql://127.0.0.1:" + address.getPort() + "/test";
      }

      @Override
      String user() {
        return "postgres";
      }

      @Override
      public boolean canWatch() {
        return true;
      }
    };
  }
}
