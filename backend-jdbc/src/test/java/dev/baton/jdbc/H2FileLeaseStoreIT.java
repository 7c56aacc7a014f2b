package dev.baton.jdbc;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Properties;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The contract on an H2 file database in AUTO_SERVER mode, opened by two pools: the way several
 * processes on one machine can share H2.
 */
class H2FileLeaseStoreIT extends JdbcLeaseStoreContract {

  private final Path file = Path.of("target", "h2-it", "leases-" + suffix).toAbsolutePath();

  @Override
  void requireServer() {
    // embedded: always there
  }

  @Override
  String url() {
    return "jdbc:h2:file:" + file + ";AUTO_SERVER=TRUE";
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

  /**
   * Other processes reach this database through the TCP server that AUTO_SERVER runs inside H2,
   * which no proxy can stand in front of; a second TCP server of this JVM opening the same file
   * would not share its locks.
   */
  @Override
  Optional<InetSocketAddress> tcpAddress() {
    return Optional.empty();
  }

  @Override
  String urlOnPort(int port) {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/" + file;
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
