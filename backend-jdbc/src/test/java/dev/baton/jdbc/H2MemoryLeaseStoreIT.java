package dev.baton.jdbc;

import java.net.InetSocketAddress;
import java.sql.SQLException;
import java.util.Properties;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The contract on an in-memory H2 database shared by two pools of this JVM. */
class H2MemoryLeaseStoreIT extends JdbcLeaseStoreContract {

  @Override
  void requireServer() {
    // embedded: always there
  }

  @Override
  String url() {
    return "jdbc:h2:mem:baton-it-" + suffix + ";DB_CLOSE_DELAY=-1";
  }

  /** Only an admin may set DB_CLOSE_DELAY; the database lives on anyway. */
  @Override
  String unprivilegedUrl() {
    return "jdbc:h2:mem:baton-it-" + suffix;
  }

  @Override
  String user() {
    return "sa";
  }

  @Override
  String password() {
    return "";
  }

  @Override
  String displayName() {
    return "H2";
  }

  /** An H2 TCP server in this JVM serves the in-memory database the two pools share. */
  @Override
  Optional<InetSocketAddress> tcpAddress() throws SQLException {
    H2TcpServer server = H2TcpServer.start();
    closeAtEnd.push(server);
    return Optional.of(server.address());
  }

  @Override
  String urlOnPort(int port) {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:baton-it-" + suffix;
  }

  @Override
  Properties badCredentials(String password) {
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, url());
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, user());
    p.setProperty(JdbcLeaseStoreProvider.PASSWORD, password);
    return p;
  }
  @Override
  List<String> createUserSql(String user, String password, Optional<String> existingTable) {
    List<String> sql = new ArrayList<>(List.of("create user " + user + " password '" + password + "'"));
    existingTable.ifPresent(t -> sql.add("grant select, insert, update on " + t + " to " + user));
    return sql;
  }

  @Override
  List<String> dropUserSql(String user) {
    return List.of("drop user if exists " + user);
  }
  @Override
  String createSchemaSql(String schema) {
    return "create schema " + schema;
  }

  @Override
  String dropSchemaSql(String schema) {
    return "drop schema if exists " + schema + " cascade";
  }
}
