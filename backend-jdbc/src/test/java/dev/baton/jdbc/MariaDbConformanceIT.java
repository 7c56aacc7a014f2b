package dev.baton.jdbc;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;
import dev.baton.testservers.JdbcServer;

/**
 * The conformance suite on MariaDB (the machine's own at 127.0.0.1:3306, or a container), each node
 * through its own proxy; followers poll.
 */
class MariaDbConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new JdbcServerFixture(JdbcServer::mariadb, false);
  }
}
