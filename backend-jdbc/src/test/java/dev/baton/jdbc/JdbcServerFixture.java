package dev.baton.jdbc;

import dev.baton.testservers.JdbcServer;
import java.net.InetSocketAddress;
import java.util.function.Supplier;

/**
 * The conformance fixture of PostgreSQL or MariaDB as {@link JdbcServer} runs it: the machine's own
 * server, whose outage cuts every node's proxies, or a container ({@code
 * -Dbaton.servers=containers}), whose outage kills the database and whose restore starts it again
 * on the same address with its data, as a database restart in production does.
 */
final class JdbcServerFixture extends JdbcConformanceFixture {

  private final Supplier<JdbcServer> starter;
  private final boolean canWatch;
  private JdbcServer database;
  private boolean killed;

  JdbcServerFixture(Supplier<JdbcServer> starter, boolean canWatch) {
    this.starter = starter;
    this.canWatch = canWatch;
  }

  @Override
  InetSocketAddress server() {
    database = starter.get();
    return database.address();
  }

  @Override
  String url(InetSocketAddress address) {
    return database.url(address);
  }

  @Override
  String user() {
    return database.user();
  }

  @Override
  void stopServer() {
    if (database != null) {
      database.close();
    }
  }

  @Override
  public boolean canWatch() {
    return canWatch;
  }

  @Override
  public boolean outageStopsServer() {
    return database.inContainer();
  }

  @Override
  public void serverOutage() throws Exception {
    if (database.inContainer()) {
      killed = true;
      database.kill();
    } else {
      super.serverOutage();
    }
  }

  @Override
  public void restore() throws Exception {
    if (killed) {
      database.restart();
      killed = false;
    }
    super.restore();
  }
}
