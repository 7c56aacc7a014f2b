package dev.baton.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * What both H2 modes share: the embedded engine, its admin user and its SQL for users and schemas.
 */
abstract class H2LeaseStoreContract extends JdbcLeaseStoreContract
    implements LongGuardedWriteContract {

  @Override
  void requireServer() {
    // embedded: always there
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
    List<String> sql =
        new ArrayList<>(List.of("create user " + user + " password '" + password + "'"));
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
