package dev.baton.testservers;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * In container mode, each server runs the image its property names (or the default), and answers as
 * that server: what a team relies on when it passes the images of its own production versions.
 */
class ContainerImagesIT {

  @BeforeAll
  static void containerMode() {
    ServerMode.requireContainers();
  }

  @Test
  void postgresRunsTheImageItsPropertyNames() throws SQLException {
    try (JdbcServer db = JdbcServer.postgres()) {
      assertThat(db.image())
          .contains(System.getProperty(JdbcServer.POSTGRES_IMAGE, "local/baton-postgres:15"));
      assertThat(version(db)).startsWith("PostgreSQL");
    }
  }

  @Test
  void mariadbRunsTheImageItsPropertyNames() throws SQLException {
    try (JdbcServer db = JdbcServer.mariadb()) {
      assertThat(db.image())
          .contains(System.getProperty(JdbcServer.MARIADB_IMAGE, "local/baton-mariadb:10.11"));
      assertThat(version(db)).containsIgnoringCase("mariadb");
    }
  }

  @Test
  void etcdRunsTheImageItsPropertyNames() {
    try (EtcdContainers etcd = EtcdContainers.start(1)) {
      assertThat(etcd.images())
          .containsExactly(System.getProperty(EtcdContainers.IMAGE, "local/baton-etcd:3.4"));
      assertThat(etcd.clientAddresses()).hasSize(1);
    }
  }

  @Test
  void zookeeperRunsTheImageItsPropertyNames() {
    try (ZooKeeperContainers zk = ZooKeeperContainers.start(1, 500)) {
      assertThat(zk.images())
          .containsExactly(
              System.getProperty(ZooKeeperContainers.IMAGE, "local/baton-zookeeper:3.8"));
      assertThat(zk.modes()).containsExactly("standalone");
    }
  }

  private static String version(JdbcServer db) throws SQLException {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), "");
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("select version()")) {
      assertThat(r.next()).isTrue();
      return r.getString(1);
    }
  }
}
