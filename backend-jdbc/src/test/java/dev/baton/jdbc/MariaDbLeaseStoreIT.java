package dev.baton.jdbc;

import dev.baton.conformance.RequiredServer;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Nested;

/** The contract on MariaDB at 127.0.0.1:3306 (user root, no password, database test). */
class MariaDbLeaseStoreIT extends JdbcLeaseStoreContract implements LongGuardedWriteContract {

  @Override
  void requireServer() {
    RequiredServer.requireTcp(
        "MariaDB",
        "127.0.0.1",
        3306,
        "sudo service mariadb start (user root, empty password, database test)");
  }

  @Override
  String url() {
    return "jdbc:mariadb://127.0.0.1:3306/test";
  }

  /**
   * Node B counts changed rows instead of found rows, so both ways MariaDB reports an upsert that
   * changed nothing are exercised.
   */
  @Override
  String secondUrl() {
    return url() + "?useAffectedRows=true";
  }

  @Override
  String user() {
    return "root";
  }

  @Override
  String password() {
    return "";
  }

  @Override
  String displayName() {
    return "MariaDB";
  }

  @Nested
  class ThroughAProxyToMariaDb extends ThroughAProxy {
    @Override
    InetSocketAddress server() {
      return new InetSocketAddress("127.0.0.1", 3306);
    }
  }

  @Override
  String urlOnPort(int port) {
    return "jdbc:mariadb://127.0.0.1:" + port + "/test";
  }

  @Override
  Properties badCredentials(String password) {
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, url());
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, "root");
    p.setProperty(JdbcLeaseStoreProvider.PASSWORD, password);
    return p;
  }

  @Override
  List<String> createUserSql(String user, String password, Optional<String> existingTable) {
    return List.of(
        "create user '" + user + "'@'%' identified by '" + password + "'",
        "grant select, insert, update on test."
            + existingTable.orElse("*")
            + " to '"
            + user
            + "'@'%'");
  }

  @Override
  List<String> dropUserSql(String user) {
    return List.of("drop user if exists '" + user + "'@'%'");
  }

  @Override
  String createSchemaSql(String schema) {
    return "create database " + schema;
  }

  @Override
  String dropSchemaSql(String schema) {
    return "drop database if exists " + schema;
  }
}
