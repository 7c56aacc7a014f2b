package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.RequiredServer;
import dev.baton.election.Lease;
import dev.baton.election.Subscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.net.InetSocketAddress;
import java.util.Properties;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The contract on PostgreSQL at 127.0.0.1:5432 (user postgres, trust, database test), and the
 * LISTEN/NOTIFY watch only PostgreSQL offers.
 */
class PostgresLeaseStoreIT extends JdbcLeaseStoreContract {

  /** Names node B's connections, so that a test can cut them from the server side. */
  private final String applicationNameB = "baton-it-b-" + suffix;

  @Override
  void requireServer() {
    RequiredServer.requireTcp("PostgreSQL", "127.0.0.1", 5432, "sudo service postgresql start (user postgres with trust, database test)");
  }

  @Override
  String url() {
    return "jdbc:postgresql://127.0.0.1:5432/test";
  }

  @Override
  String secondUrl() {
    return url() + "?ApplicationName=" + applicationNameB;
  }

  @Override
  String user() {
    return "postgres";
  }

  @Override
  String password() {
    return "";
  }

  @Override
  String displayName() {
    return "PostgreSQL";
  }

  @Override
  boolean canWatch() {
    return true;
  }

  @Override
  Optional<InetSocketAddress> tcpAddress() {
    return Optional.of(new InetSocketAddress("127.0.0.1", 5432));
  }

  @Override
  String urlOnPort(int port) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/test";
  }

  /** The server trusts every local user, so only an unknown role is refused; the password must still stay hidden. */
  @Override
  Properties badCredentials(String password) {
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, url());
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, "no_such_role_" + suffix);
    p.setProperty(JdbcLeaseStoreProvider.PASSWORD, password);
    return p;
  }

  @Test
  void watchHearsATakeoverAndARelease() {
    String e = election("watch");
    AtomicInteger heard = new AtomicInteger();
    try (Subscription subscription = storeB.watch(e, heard::incrementAndGet).orElseThrow()) {
      Lease a = grant(storeA, e, "node-a", LONG);
      await().atMost(Duration.ofSeconds(10)).until(() -> heard.get() >= 1);
      int beforeRelease = heard.get();

      storeA.release(a);

      await().atMost(Duration.ofSeconds(10)).until(() -> heard.get() > beforeRelease);
    }
  }

  @Test
  void aWatcherHearsOnlyItsOwnElection() {
    String watched = election("watched");
    String other = election("other");
    AtomicInteger heardWatched = new AtomicInteger();
    AtomicInteger heardOther = new AtomicInteger();
    try (Subscription w = storeB.watch(watched, heardWatched::incrementAndGet).orElseThrow();
        Subscription o = storeB.watch(other, heardOther::incrementAndGet).orElseThrow()) {
      storeA.release(grant(storeA, other, "node-a", LONG));

      await().atMost(Duration.ofSeconds(10)).until(() -> heardOther.get() >= 2);
      // Notifications arrive in commit order: had one been sent for the watched election before
      // the release of the other, it would have been delivered already.
      assertThat(heardWatched.get()).isZero();
    }
  }

  @Test
  void afterTheListenConnectionIsCutEveryWatcherRunsOnceAndReleasesAreHeardAgain() throws SQLException {
    String e = election("watch-reconnect");
    AtomicInteger heard = new AtomicInteger();
    try (Subscription subscription = storeB.watch(e, heard::incrementAndGet).orElseThrow()) {
      assertThat(terminateNodeBConnections()).isPositive();

      await().atMost(Duration.ofSeconds(20)).until(() -> heard.get() >= 1);
      int beforeRelease = heard.get();
      storeA.release(grant(storeA, e, "node-a", LONG));
      await().atMost(Duration.ofSeconds(10)).until(() -> heard.get() > beforeRelease);
    }
  }

  private int terminateNodeBConnections() throws SQLException {
    try (Connection c = poolA.getConnection();
        PreparedStatement s =
            c.prepareStatement("select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = ?")) {
      s.setString(1, applicationNameB);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
  @Override
  List<String> createUserSql(String user, String password, Optional<String> existingTable) {
    List<String> sql = new ArrayList<>(List.of("create role " + user + " login password '" + password + "'"));
    existingTable.ifPresent(t -> sql.add("grant select, insert, update on " + t + " to " + user));
    return sql;
  }

  @Override
  List<String> dropUserSql(String user) {
    return List.of("drop owned by " + user, "drop role if exists " + user);
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
