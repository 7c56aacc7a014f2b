package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.RequiredServer;
import dev.baton.election.Lease;
import dev.baton.election.Renewal;
import dev.baton.election.Subscription;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The contract on PostgreSQL at 127.0.0.1:5432 (user postgres, trust, database test), and the
 * LISTEN/NOTIFY watch only PostgreSQL offers.
 */
class PostgresLeaseStoreIT extends JdbcLeaseStoreContract implements LongGuardedWriteContract {

  /** Names node B's connections, so that a test can cut them from the server side. */
  private final String applicationNameB = "baton-it-b-" + suffix;

  @Override
  void requireServer() {
    RequiredServer.requireTcp(
        "PostgreSQL",
        "127.0.0.1",
        5432,
        "sudo service postgresql start (user postgres with trust, database test)");
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

  @Nested
  class ThroughAProxyToPostgres extends ThroughAProxy {
    @Override
    InetSocketAddress server() {
      return new InetSocketAddress("127.0.0.1", 5432);
    }
  }

  @Override
  String urlOnPort(int port) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/test";
  }

  @Override
  String urlWithSmallSendBuffer(int port) {
    return urlOnPort(port) + "?sendBufferSize=8192";
  }

  /**
   * The server trusts every local user, so only an unknown role is refused; the password must still
   * stay hidden.
   */
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
  void aLeaseWatchIgnoresRenewalsAndHearsAReleaseBehindTheLeadersBack() {
    String e = election("lease-watch");
    Lease a = grant(storeA, e, "node-a", LONG);
    AtomicInteger lost = new AtomicInteger();
    try (Subscription watch = storeA.watchLease(a, lost::incrementAndGet).orElseThrow()) {
      for (int i = 0; i < 5; i++) {
        a = storeA.renew(a);
      }
      // Notifications arrive in commit order: a renewal that told would have done so by the time
      // a release of another election, committed after them, is heard.
      String marker = election("lease-watch-marker");
      AtomicInteger markerHeard = new AtomicInteger();
      try (Subscription m = storeB.watch(marker, markerHeard::incrementAndGet).orElseThrow()) {
        storeB.release(grant(storeB, marker, "node-b", LONG));
        await().atMost(Duration.ofSeconds(10)).until(() -> markerHeard.get() >= 2);
      }
      assertThat(lost).as("told after the leader's own renewals").hasValue(0);

      storeB.release(a); // an operator's release, from another process

      await().atMost(Duration.ofSeconds(10)).until(() -> lost.get() == 1);
    }
  }

  @Test
  void aLeaseWatchHearsATakeoverAfterTheLeaseRanOut() {
    String e = election("lease-watch-takeover");
    Lease a = grant(storeA, e, "node-a", Duration.ofSeconds(1));
    AtomicInteger lost = new AtomicInteger();
    try (Subscription watch = storeA.watchLease(a, lost::incrementAndGet).orElseThrow()) {
      Lease b =
          await()
              .atMost(Duration.ofSeconds(10))
              .until(() -> storeB.tryAcquire(e, "node-b", LONG).lease(), Optional::isPresent)
              .orElseThrow();

      await().atMost(Duration.ofSeconds(10)).until(() -> lost.get() == 1);
      storeB.release(b);
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
  void afterTheListenConnectionIsCutEveryWatcherRunsOnceAndReleasesAreHeardAgain()
      throws SQLException {
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

  @Test
  void aWatcherHearsWhenALeaseRunsOutAndNotBefore() {
    String e = election("watch-expiry");
    List<Long> heardAt = new CopyOnWriteArrayList<>();
    try (Subscription subscription =
        storeB.watch(e, () -> heardAt.add(System.nanoTime())).orElseThrow()) {
      long t0 = System.nanoTime();
      Lease a = grant(storeA, e, "node-a", SHORT);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> heardAt.size() >= 2); // the grant, then the expiry

      assertThat(storeB.watchReportsExpiry()).isTrue();
      assertThat(heardAt.get(1) - t0)
          .as("nanos from the grant's start to the second word")
          .isGreaterThanOrEqualTo(a.ttl().toNanos());
      assertThat(storeB.tryAcquire(e, "node-b", LONG).isGranted()).isTrue();
    }
  }

  /** A watch that begins while a lease is held learns when it runs out from the row. */
  @Test
  void aWatchBegunWhileALeaseIsHeldHearsWhenItRunsOut() {
    String e = election("watch-late");
    long t0 = System.nanoTime();
    Lease a = grant(storeA, e, "node-a", SHORT);
    List<Long> heardAt = new CopyOnWriteArrayList<>();
    try (Subscription subscription =
        storeB.watch(e, () -> heardAt.add(System.nanoTime())).orElseThrow()) {
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> heardAt.stream().anyMatch(t -> t - t0 >= a.ttl().toNanos()));
      assertThat(storeB.read(e)).isEmpty();
    }
  }

  @Test
  void renewalsOneByOneOrInABatchKeepAWatcherQuietUntilTheLeaseRunsOut() {
    String one = election("watch-renewed");
    String batched = election("watch-batch-renewed");
    AtomicInteger heardOne = new AtomicInteger();
    AtomicInteger heardBatched = new AtomicInteger();
    try (Subscription s1 = storeB.watch(one, heardOne::incrementAndGet).orElseThrow();
        Subscription s2 = storeB.watch(batched, heardBatched::incrementAndGet).orElseThrow()) {
      Lease a = grant(storeA, one, "node-a", SHORT);
      Lease b = grant(storeA, batched, "node-a", SHORT);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> heardOne.get() == 1 && heardBatched.get() == 1); // the grants
      heardOne.set(0);
      heardBatched.set(0);
      // Renew for three lease durations, every third of one: a watcher that missed a renewal
      // would hear an expiry that never happened.
      long until = System.nanoTime() + SHORT.multipliedBy(3).toNanos();
      while (System.nanoTime() - until < 0) {
        a = storeA.renew(a);
        b = storeA.renewAll(List.of(b)).get(0).leaseOrThrow();
        LockSupport.parkNanos(SHORT.dividedBy(3).toNanos());
      }
      assertThat(heardOne.get()).as("words for %s while renewed", one).isZero();
      assertThat(heardBatched.get()).as("words for %s while renewed in batches", batched).isZero();

      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> heardOne.get() > 0 && heardBatched.get() > 0);
      assertThat(storeB.read(one)).isEmpty();
      assertThat(storeB.read(batched)).isEmpty();
    }
  }

  /**
   * A batch renewal tells followers about every election it renewed, and only those, in payloads
   * PostgreSQL accepts (at most 8000 bytes each), however long the names.
   */
  @Test
  void aBatchRenewalNotifiesEveryRenewedElectionInPayloadsPostgresqlAccepts() throws SQLException {
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      String name = election("batch-notice-" + i + "-\u00e9\u20ac-") + "x".repeat(150);
      leases.add(grant(storeA, name, "node-a", LONG));
    }
    Lease lost = leases.get(7);
    storeA.release(lost);
    Set<String> heard = new HashSet<>();
    try (Connection c = poolB.getConnection();
        Statement s = c.createStatement()) {
      s.execute("LISTEN \"" + new LeaseTable(Optional.empty(), tableName).channel() + "\"");

      List<Renewal> outcomes = storeA.renewAll(leases);

      assertThat(outcomes.get(7).isRenewed()).isFalse();
      PGConnection pg = c.unwrap(PGConnection.class);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                PGNotification[] ns = pg.getNotifications(100);
                for (PGNotification n : ns == null ? new PGNotification[0] : ns) {
                  assertThat(n.getParameter().getBytes(StandardCharsets.UTF_8).length)
                      .isLessThanOrEqualTo(8000);
                  assertThat(
                          LeaseNotice.read(
                              n.getParameter(),
                              (kind, e, millis) -> {
                                assertThat(kind).isEqualTo(LeaseNotice.Kind.RENEWED);
                                assertThat(millis)
                                    .isEqualTo(
                                        LONG.toMillis() + LeaseTable.TRUNCATION_MARGIN_MILLIS);
                                heard.add(e);
                              }))
                      .as("readable: %s", n.getParameter())
                      .isTrue();
                }
                return heard.size() >= leases.size() - 1;
              });
      s.execute("UNLISTEN *");
    }
    Set<String> renewed = new HashSet<>();
    leases.forEach(l -> renewed.add(l.election()));
    renewed.remove(lost.election());
    assertThat(heard).isEqualTo(renewed);
    for (Lease l : leases) {
      storeA.release(l);
    }
  }

  private int terminateNodeBConnections() throws SQLException {
    try (Connection c = poolA.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = ?")) {
      s.setString(1, applicationNameB);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  @Override
  List<String> createUserSql(String user, String password, Optional<String> existingTable) {
    List<String> sql =
        new ArrayList<>(List.of("create role " + user + " login password '" + password + "'"));
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
