package dev.baton.jdbc;

import java.util.Properties;

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
  String urlOnPort(int port) {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:unreachable";
  }

  @Override
  Properties badCredentials(String password) {
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, url());
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, user());
    p.setProperty(JdbcLeaseStoreProvider.PASSWORD, password);
    return p;
  }
}
