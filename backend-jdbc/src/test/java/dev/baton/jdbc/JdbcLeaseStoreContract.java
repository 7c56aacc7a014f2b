package dev.baton.jdbc;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.table;
import static org.jooq.impl.DSL.unquotedName;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.conformance.FaultProxy;
import dev.baton.election.Acquisition;
import dev.baton.election.ElectionProperties;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.conf.RenderQuotedNames;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The store-level contract on one real database, written once: each database's {@code *IT} subclass
 * says how to reach it. Two stores on two separate pools stand for two nodes. Every test uses its
 * own election names; the class uses its own table, dropped at the end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcLeaseStoreContract {

  static final Duration LONG = Duration.ofSeconds(30);
  static final Duration SHORT = Duration.ofSeconds(1);

  /** Skips or (with CI=true) fails when the server is not there. */
  abstract void requireServer();

  abstract String url();

  abstract String user();

  abstract String password();

  /** As {@link LeaseStore#describe()} names the database. */
  abstract String displayName();

  /**
   * A JDBC URL of this database on a loopback port: one nothing listens on, or a proxy in front of
   * {@link ThroughAProxy#server()}.
   */
  abstract String urlOnPort(int port);

  /**
   * {@link #urlOnPort} with a small socket send buffer where the driver can set one (PostgreSQL's
   * {@code sendBufferSize}), as on a link whose window never grew: loopback lets a send buffer grow
   * to megabytes, which a whole batch renewal fits in, so its write would never block here.
   */
  String urlWithSmallSendBuffer(int port) {
    return urlOnPort(port);
  }

  /** Properties for the provider whose credentials the server refuses, with {@code password}. */
  abstract Properties badCredentials(String password);

  /**
   * Admin SQL that creates a login allowed to select, insert and update {@code existingTable} but
   * not to create tables; without a table, the grants a login needs to find that a table is missing
   * (MariaDB: on every table of the database, since it cannot grant on a missing one).
   */
  abstract List<String> createUserSql(String user, String password, Optional<String> existingTable);

  abstract List<String> dropUserSql(String user);

  /** Admin SQL that creates {@code schema} (MariaDB: a database) and the SQL that drops it. */
  abstract String createSchemaSql(String schema);

  abstract String dropSchemaSql(String schema);

  /** The URL for a login without admin rights; the same database. */
  String unprivilegedUrl() {
    return url();
  }

  /** The URL of the second node's pool; the same database. */
  String secondUrl() {
    return url();
  }

  boolean canWatch() {
    return false;
  }

  final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
  final String tableName = "baton_it_" + suffix;
  final String workTable = "baton_it_work_" + suffix;
  final List<String> extraTables = new CopyOnWriteArrayList<>();

  /** Closed after everything else, last first. */
  final Deque<AutoCloseable> closeAtEnd = new ConcurrentLinkedDeque<>();

  HikariDataSource poolA;
  HikariDataSource poolB;
  JdbcLeaseStore storeA;
  JdbcLeaseStore storeB;

  @BeforeAll
  void openStores() throws SQLException {
    requireServer();
    poolA = pool(url(), "a");
    poolB = pool(secondUrl(), "b");
    storeA = JdbcLeaseStore.builder(poolA).table(tableName).build();
    storeB = JdbcLeaseStore.builder(poolB).table(tableName).build();
    execute(
        poolA,
        "create table "
            + workTable
            + " (election varchar(255) not null, writer varchar(255) not null, token bigint not null)");
  }

  @AfterAll
  void closeStores() throws SQLException {
    if (storeA != null) {
      storeA.close();
      storeB.close();
    }
    if (poolA != null) {
      for (String t : List.of(tableName, workTable)) {
        execute(poolA, "drop table if exists " + t);
      }
      for (String t : extraTables) {
        execute(poolA, "drop table if exists " + t);
      }
      poolA.close();
      poolB.close();
    }
    for (AutoCloseable c : closeAtEnd) {
      try {
        c.close();
      } catch (Exception e) {
        throw new IllegalStateException("cannot close " + c, e);
      }
    }
  }

  HikariDataSource pool(String url, String node) {
    return pool(url, node, user(), password());
  }

  HikariDataSource pool(String url, String node, String user, String password) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("it-" + node + "-" + suffix);
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword(password);
    config.setMaximumPoolSize(5);
    config.setMinimumIdle(1);
    config.setConnectionTimeout(3000);
    return new HikariDataSource(config);
  }

  static void execute(javax.sql.DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  public String election(String what) {
    return what + "-" + UUID.randomUUID();
  }

  public JdbcLeaseStore leader() {
    return storeA;
  }

  public JdbcLeaseStore leaderWithCallTimeout(Duration callTimeout) {
    return JdbcLeaseStore.builder(poolA).table(tableName).callTimeout(callTimeout).build();
  }

  static Lease grant(LeaseStore store, String election, String candidate, Duration ttl) {
    Acquisition acquisition = store.tryAcquire(election, candidate, ttl);
    assertThat(acquisition.isGranted()).as("granted to %s: %s", candidate, acquisition).isTrue();
    return acquisition.lease().orElseThrow();
  }

  static Lease awaitGrant(LeaseStore store, String election, String candidate, Duration ttl) {
    AtomicReference<Lease> granted = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                store
                    .tryAcquire(election, candidate, ttl)
                    .lease()
                    .map(l -> granted.compareAndSet(null, l))
                    .orElse(false));
    return granted.get();
  }

  // ---- exclusion, time, fencing ----

  @Test
  void grantsAFreeElectionAndRefusesAnotherCandidateWhileHeld() {
    String e = election("exclusion");
    Lease a = grant(storeA, e, "node-a", LONG);
    assertThat(a.election()).isEqualTo(e);
    assertThat(a.candidate()).isEqualTo("node-a");
    assertThat(a.ttl()).isEqualTo(LONG);

    Acquisition b = storeB.tryAcquire(e, "node-b", LONG);

    assertThat(b.isGranted()).isFalse();
    LeaseRecord holder = b.holder().orElseThrow();
    assertThat(holder.holder()).isEqualTo("node-a");
    assertThat(holder.token()).isEqualTo(a.token());
    assertThat(holder.ttl()).isEqualTo(LONG);
    assertThat(holder.expiresIn().orElseThrow())
        .isPositive()
        .isLessThanOrEqualTo(LONG.plusMillis(LeaseTable.TRUNCATION_MARGIN_MILLIS));
    assertThat(holder.renewedAt()).isPresent();
  }

  @Test
  void grantsAnotherCandidateOnlyOnceTheLeaseExpiredByTheDatabaseClock() {
    String e = election("expiry");
    long t0 = System.nanoTime();
    Lease a = grant(storeA, e, "node-a", SHORT);
    assertThat(storeB.tryAcquire(e, "node-b", LONG).isGranted()).isFalse();

    Lease b = awaitGrant(storeB, e, "node-b", LONG);
    long grantReturned = System.nanoTime();

    // The grant happened before its call returned, and the contract forbids it before t0 + ttl.
    assertThat(Duration.ofNanos(grantReturned - t0)).isGreaterThanOrEqualTo(SHORT);
    assertThat(b.token().isNewerThan(a.token())).isTrue();
  }

  @Test
  void everyGrantBeginsANewTermEvenForTheSameCandidate() {
    String e = election("terms");
    List<FencingToken> tokens = new ArrayList<>();
    Lease first = grant(storeA, e, "node-a", LONG);
    tokens.add(first.token());
    storeA.release(first);
    Lease again = grant(storeA, e, "node-a", LONG);
    tokens.add(again.token());
    storeA.release(again);
    Lease other = grant(storeB, e, "node-b", SHORT);
    tokens.add(other.token());
    Lease afterExpiry = awaitGrant(storeA, e, "node-a", LONG);
    tokens.add(afterExpiry.token());

    assertThat(tokens).isSortedAccordingTo(FencingToken::compareTo).doesNotHaveDuplicates();
  }

  @Test
  void tokensKeepIncreasingAfterTheLeaseRowIsLost() throws SQLException {
    String e = election("row-lost");
    storeA.release(grant(storeA, e, "node-a", LONG));
    Lease last = grant(storeA, e, "node-a", LONG);
    // What a table dropped and created again leaves, or a restore from before the first grant.
    execute(poolA, "delete from " + tableName + " where election = '" + e + "'");

    Lease after = grant(storeB, e, "node-b", LONG);

    assertThat(after.token().isNewerThan(last.token()))
        .as("%s after %s", after.token(), last.token())
        .isTrue();
  }

  @Test
  void tokensKeepIncreasingAfterTheLeaseRowGoesBackToAnOlderTerm() throws SQLException {
    String e = election("row-restored");
    Lease first = grant(storeA, e, "node-a", LONG);
    storeA.release(first);
    Lease last = grant(storeA, e, "node-a", LONG);
    // What a restore from a backup, or a failover to a replica behind the primary, leaves.
    execute(
        poolA,
        "update "
            + tableName
            + " set holder = null, term = "
            + first.token().value()
            + " where election = '"
            + e
            + "'");

    Lease after = grant(storeB, e, "node-b", LONG);

    assertThat(after.token().isNewerThan(last.token()))
        .as("%s after %s", after.token(), last.token())
        .isTrue();
  }

  // ---- renew ----

  @Test
  void renewKeepsTheTokenAndExtendsTheLeaseByTheDatabaseClock() {
    String e = election("renew");
    Duration ttl = Duration.ofSeconds(3);
    Lease a = grant(storeA, e, "node-a", ttl);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> expiresIn(e).compareTo(Duration.ofSeconds(2)) < 0);

    Lease renewed = storeA.renew(a);

    assertThat(renewed.token()).isEqualTo(a.token());
    assertThat(renewed.ttl()).isEqualTo(ttl);
    assertThat(expiresIn(e)).isGreaterThan(Duration.ofSeconds(2));
    assertThat(storeB.tryAcquire(e, "node-b", ttl).isGranted()).isFalse();
  }

  private Duration expiresIn(String election) {
    return storeB.read(election).orElseThrow().expiresIn().orElseThrow();
  }

  @Test
  void renewIsRefusedOnceExpiredEvenWhenNobodyTookOver() {
    String e = election("renew-expired");
    Lease a = grant(storeA, e, "node-a", SHORT);
    await().atMost(Duration.ofSeconds(10)).until(() -> storeB.read(e).isEmpty());

    assertThatThrownBy(() -> storeA.renew(a))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("node-a");
  }

  @Test
  void renewIsRefusedAfterATakeoverAndNamesTheNewHolder() {
    String e = election("renew-taken");
    Lease a = grant(storeA, e, "node-a", SHORT);
    Lease b = awaitGrant(storeB, e, "node-b", LONG);

    assertThatThrownBy(() -> storeA.renew(a))
        .isInstanceOfSatisfying(
            LeaseLostException.class, lost -> assertThat(lost.holder()).contains("node-b"));
    assertThat(storeA.read(e).orElseThrow().token()).isEqualTo(b.token());
  }

  @Test
  void renewOfAnEarlierTermOfTheSameCandidateIsRefused() {
    String e = election("renew-old-term");
    Lease first = grant(storeA, e, "node-a", LONG);
    storeA.release(first);
    Lease second = grant(storeA, e, "node-a", LONG);

    assertThatThrownBy(() -> storeA.renew(first)).isInstanceOf(LeaseLostException.class);
    assertThat(storeA.renew(second).token()).isEqualTo(second.token());
  }

  // ---- release and read ----

  @Test
  void renewAllRenewsEachLiveLeaseOfABatchAndRefusesEachLostOneOnItsOwn() {
    // Node B: on MariaDB it counts changed rows, so a renewal in the grant's millisecond counts
    // none.
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      leases.add(grant(storeB, election("batch-" + i), "node-b", SHORT));
    }
    storeB.release(leases.get(1));
    Lease takenOver = leases.get(3);
    storeB.release(takenOver);
    Lease successor = grant(storeA, takenOver.election(), "node-a", LONG);

    List<Renewal> outcomes = storeB.renewAll(leases);

    assertThat(outcomes).hasSize(5);
    for (int i : new int[] {0, 2, 4}) {
      Lease renewed = outcomes.get(i).leaseOrThrow();
      assertThat(renewed.token()).isEqualTo(leases.get(i).token());
      assertThat(storeA.tryAcquire(leases.get(i).election(), "node-a", LONG).isGranted()).isFalse();
    }
    assertThat(outcomes.get(1).failure()).containsInstanceOf(LeaseLostException.class);
    assertThat(outcomes.get(3).failure())
        .get()
        .isInstanceOf(LeaseLostException.class)
        .extracting(Throwable::getMessage)
        .asString()
        .contains("node-a");
    assertThat(storeB.renewBatchLimit()).isGreaterThanOrEqualTo(500);
    storeA.release(successor);
  }

  /** Leases granted to node-a on {@code store}, one per new election. */
  private List<Lease> grantAll(LeaseStore store, String what, int count, Duration ttl) {
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      leases.add(grant(store, election(what + "-" + i), "node-a", ttl));
    }
    return leases;
  }

  private void assertRenewedWithItsOwnTtl(Lease asked, Renewal outcome) {
    Lease renewed =
        outcome
            .lease()
            .orElseThrow(
                () -> new AssertionError(asked.election() + " was not renewed: " + outcome));
    assertThat(renewed.token()).as("token of %s", asked.election()).isEqualTo(asked.token());
    assertThat(renewed.ttl()).as("ttl of %s", asked.election()).isEqualTo(asked.ttl());
    LeaseRecord row = storeB.read(asked.election()).orElseThrow();
    assertThat(row.holder()).isEqualTo(asked.candidate());
    assertThat(row.ttl()).as("ttl in the row of %s", asked.election()).isEqualTo(asked.ttl());
  }

  /** No JDBC batch of single renewals, the cost MariaDB paid for its batches before. */
  @Test
  void renewAllOfLiveLeasesWithOneTtlIsOneUpdate() {
    CountingDataSource counted = new CountingDataSource(poolA);
    try (JdbcLeaseStore store =
        JdbcLeaseStore.builder(counted.dataSource()).table(tableName).build()) {
      // 37 leases pad to the statement for 64; a longer TTL shows in every row the update wrote.
      List<Lease> asked = new ArrayList<>();
      for (Lease l : grantAll(store, "one-statement", 37, LONG)) {
        asked.add(l.renewed(LONG.multipliedBy(2), l.handle()));
      }
      counted.reset();

      List<Renewal> outcomes = store.renewAll(asked);

      // On MariaDB, MySQL and H2 a select first locks the rows no guarded write holds.
      boolean oneStatement = displayName().equals("PostgreSQL");
      assertThat(counted.prepared())
          .as("statements prepared: one on PostgreSQL, a lock and an update elsewhere")
          .isEqualTo(oneStatement ? 1 : 2);
      assertThat(counted.batches()).as("JDBC batches").isZero();
      assertThat(outcomes).hasSameSizeAs(asked);
      for (int i = 0; i < asked.size(); i++) {
        assertRenewedWithItsOwnTtl(asked.get(i), outcomes.get(i));
      }
      asked.forEach(store::release);
    }
  }

  @Test
  void renewAllOfLeasesWithTwoTtlsRenewsEachWithItsOwnInOneStatementPerTtl() {
    CountingDataSource counted = new CountingDataSource(poolA);
    try (JdbcLeaseStore store =
        JdbcLeaseStore.builder(counted.dataSource()).table(tableName).build()) {
      List<Lease> asked = new ArrayList<>();
      List<Lease> granted = grantAll(store, "two-ttls", 6, LONG);
      for (int i = 0; i < granted.size(); i++) {
        Lease l = granted.get(i);
        asked.add(
            l.renewed(i % 2 == 0 ? Duration.ofSeconds(40) : Duration.ofSeconds(50), l.handle()));
      }
      counted.reset();

      List<Renewal> outcomes = store.renewAll(asked);

      boolean postgres = displayName().equals("PostgreSQL");
      int updates = postgres ? 1 : 2;
      assertThat(counted.prepared())
          .as("statements prepared: one on PostgreSQL, one per TTL elsewhere, and a lock")
          .isEqualTo(postgres ? updates : updates + 1);
      assertThat(counted.batches()).as("JDBC batches").isZero();
      assertThat(outcomes).hasSameSizeAs(asked);
      for (int i = 0; i < asked.size(); i++) {
        assertRenewedWithItsOwnTtl(asked.get(i), outcomes.get(i));
      }
      asked.forEach(store::release);
    }
  }

  @Test
  void renewAllOfTheSameLeaseTwiceInABatchRenewsItTwice() {
    List<Lease> granted = grantAll(storeA, "twice", 2, LONG);
    List<Lease> asked = List.of(granted.get(0), granted.get(1), granted.get(0));

    List<Renewal> outcomes = storeA.renewAll(asked);

    assertThat(outcomes).hasSize(3);
    for (int i = 0; i < asked.size(); i++) {
      assertRenewedWithItsOwnTtl(asked.get(i), outcomes.get(i));
    }
    granted.forEach(storeA::release);
  }

  /** How a lease in the middle of a batch was lost before the batch renewal. */
  enum Loss {
    TAKEN_OVER,
    RELEASED,
    EXPIRED,
    RELEASED_AND_GRANTED_AGAIN_TO_ITS_HOLDER
  }

  @ParameterizedTest(name = "a lease {0} in the middle of a batch is the only one lost")
  @EnumSource(Loss.class)
  void aLeaseLostInTheMiddleOfABatchIsTheOnlyOneLost(Loss loss) {
    List<Lease> asked = grantAll(storeA, "lost-" + loss, 9, LONG);
    int middle = 4;
    Lease lost = asked.get(middle);
    String e = lost.election();
    Lease successor = null;
    // A successor's own TTL in its row shows that the renewal left the row alone.
    Duration successorTtl = Duration.ofSeconds(45);
    switch (loss) {
      case TAKEN_OVER -> {
        storeA.release(lost);
        successor = grant(storeB, e, "node-b", successorTtl);
      }
      case RELEASED -> storeA.release(lost);
      case EXPIRED -> {
        storeA.release(lost);
        Lease shortLived = grant(storeA, e, "node-a", SHORT);
        await().atMost(Duration.ofSeconds(20)).until(() -> storeB.read(e).isEmpty());
        // Asked with the others' TTL, so that it sits in their statement.
        asked.set(middle, shortLived.renewed(LONG, shortLived.handle()));
      }
      case RELEASED_AND_GRANTED_AGAIN_TO_ITS_HOLDER -> {
        storeA.release(lost);
        successor = grant(storeA, e, "node-a", successorTtl);
      }
      default -> throw new IllegalStateException(loss.name());
    }

    List<Renewal> outcomes = storeA.renewAll(asked);

    assertThat(outcomes).hasSameSizeAs(asked);
    for (int i = 0; i < asked.size(); i++) {
      if (i != middle) {
        assertRenewedWithItsOwnTtl(asked.get(i), outcomes.get(i));
      }
    }
    assertThat(outcomes.get(middle).failure())
        .as("outcome for the lease %s", loss)
        .containsInstanceOf(LeaseLostException.class);
    LeaseLostException failure = (LeaseLostException) outcomes.get(middle).failure().orElseThrow();
    Optional<LeaseRecord> row = storeB.read(e);
    if (successor == null) {
      assertThat(failure.holder()).isEmpty();
      assertThat(row).as("the row of %s after the batch", e).isEmpty();
    } else {
      assertThat(failure.holder()).contains(successor.candidate());
      assertThat(row.orElseThrow().token())
          .as("token in the row of %s after the batch", e)
          .isEqualTo(successor.token());
      assertThat(row.orElseThrow().ttl()).isEqualTo(successorTtl);
      (successor.candidate().equals("node-b") ? storeB : storeA).release(successor);
    }
    for (int i = 0; i < asked.size(); i++) {
      if (i != middle) {
        storeA.release(asked.get(i));
      }
    }
  }

  @Test
  void renewAllOfAStoreThatCannotReachItsDatabaseFailsEveryLease() throws IOException {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, urlOnPort(port));
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, user());
    p.setProperty(JdbcLeaseStoreProvider.CALL_TIMEOUT, "1s");
    try (LeaseStore store = new JdbcLeaseStoreProvider().open(ElectionProperties.of(p))) {
      List<Lease> leases =
          List.of(
              new Lease(election("unreachable-1"), "node-a", FencingToken.of(1), LONG, ""),
              new Lease(election("unreachable-2"), "node-a", FencingToken.of(1), LONG, ""));

      List<Renewal> outcomes = store.renewAll(leases);

      assertThat(outcomes)
          .hasSize(2)
          .allSatisfy(r -> assertThat(r.failure()).containsInstanceOf(LeaseStoreException.class));
    }
  }

  @Test
  void releaseLetsAnotherCandidateInAtOnce() {
    String e = election("release");
    Lease a = grant(storeA, e, "node-a", LONG);

    storeA.release(a);

    assertThat(storeB.read(e)).isEmpty();
    Lease b = grant(storeB, e, "node-b", LONG);
    assertThat(b.token().isNewerThan(a.token())).isTrue();
  }

  @Test
  void aLiveLeaseIsRefusedToItsOwnHoldersIdInAnotherStore() {
    String e = election("same-id");
    Lease first = grant(storeA, e, "node-a", LONG);

    Acquisition twin = storeB.tryAcquire(e, "node-a", LONG);

    assertThat(twin.isGranted()).as("an acquire of the same id while its lease is live").isFalse();
    assertThat(twin.holder())
        .hasValueSatisfying(
            h ->
                assertThat(List.of(h.holder(), h.token()))
                    .containsExactly("node-a", first.token()));
    assertThat(storeA.renew(first).token()).isEqualTo(first.token());
    storeA.release(first);
    assertThat(grant(storeB, e, "node-a", LONG).token().isNewerThan(first.token())).isTrue();
  }

  @Test
  void releaseNeverRemovesSomebodyElsesLease() {
    String e = election("release-other");
    Lease a = grant(storeA, e, "node-a", SHORT);
    Lease b = awaitGrant(storeB, e, "node-b", LONG);

    storeA.release(a);
    assertThat(storeA.read(e).orElseThrow().holder()).isEqualTo("node-b");

    storeB.release(b);
    Lease bAgain = grant(storeB, e, "node-b", LONG);
    storeB.release(b);
    assertThat(storeA.read(e).orElseThrow().token()).isEqualTo(bAgain.token());
  }

  @Test
  void readShowsTheHolderAndIsEmptyWhenNobodyHoldsIt() {
    String e = election("read");
    assertThat(storeA.read(e)).isEmpty();
    Lease a = grant(storeA, e, "node-a", LONG);

    LeaseRecord seen = storeB.read(e).orElseThrow();

    assertThat(seen.election()).isEqualTo(e);
    assertThat(seen.holder()).isEqualTo("node-a");
    assertThat(seen.token()).isEqualTo(a.token());
    assertThat(seen.ttl()).isEqualTo(LONG);
    assertThat(seen.expiresIn().orElseThrow())
        .isPositive()
        .isLessThanOrEqualTo(LONG.plusMillis(LeaseTable.TRUNCATION_MARGIN_MILLIS));
    // The database runs on this machine: its wall clock, read back in UTC, is close to ours.
    assertThat(seen.renewedAt().orElseThrow())
        .isBetween(Instant.now().minusSeconds(300), Instant.now().plusSeconds(300));
    storeA.release(a);
    assertThat(storeB.read(e)).isEmpty();
  }

  @Test
  void appliesTheTtlRoundedUpToWholeMilliseconds() {
    String e = election("ttl");
    Duration asked = Duration.ofMillis(1500).plusNanos(1);

    Lease a = grant(storeA, e, "node-a", asked);

    assertThat(a.ttl()).isEqualTo(Duration.ofMillis(1501)).isGreaterThanOrEqualTo(asked);
    assertThat(storeA.read(e).orElseThrow().ttl()).isEqualTo(Duration.ofMillis(1501));
  }

  @Test
  void describesTheDatabase() {
    storeA.read(election("describe"));
    assertThat(storeA.describe()).isEqualTo("jdbc (" + displayName() + ")");
  }

  @Test
  void watchIsOfferedOnlyWhereTheDatabaseCanPushReleasesAndReportsExpiryThere() {
    var subscription = storeB.watch(election("watch-offered"), () -> {});
    subscription.ifPresent(s -> s.close());
    assertThat(subscription.isPresent()).isEqualTo(canWatch());
    assertThat(storeB.watchReportsExpiry()).isEqualTo(canWatch());
  }

  // ---- guarded writes ----

  @Test
  void guardedWriteCommitsWhileTheTermIsCurrent() throws SQLException {
    String e = election("guarded");
    Lease a = grant(storeA, e, "node-a", LONG);

    int inserted = storeA.inTerm(a, dsl -> insertWork(dsl, e, "node-a", a.token()));
    long viaJdbc =
        storeA.inTermWithConnection(
            e, "node-a", a.token(), c -> insertWork(c, e, "node-a", a.token()));

    assertThat(inserted).isEqualTo(1);
    assertThat(viaJdbc).isEqualTo(1);
    assertThat(workRows(e)).containsExactly("node-a", "node-a");
  }

  @Test
  void guardedWriteOfALeaderWhoseLeaseWasTakenOverIsRolledBack() throws SQLException {
    String e = election("guarded-stale");
    Lease a = grant(storeA, e, "node-a", SHORT);
    Lease b = awaitGrant(storeB, e, "node-b", LONG);

    assertThatThrownBy(() -> storeA.inTerm(a, dsl -> insertWork(dsl, e, "node-a", a.token())))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("nothing was committed");
    assertThatThrownBy(
            () -> storeA.inTermWithConnection(a, c -> insertWork(c, e, "node-a", a.token())))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("now held by node-b with token " + b.token().value())
        .satisfies(t -> assertThat(((LeaseLostException) t).holder()).contains("node-b"));
    storeB.inTermWithConnection(b, c -> insertWork(c, e, "node-b", b.token()));

    assertThat(workRows(e)).containsExactly("node-b");
  }

  @Test
  void guardedWriteIsRolledBackWhenTheWorkFails() {
    String e = election("guarded-fails");
    Lease a = grant(storeA, e, "node-a", LONG);

    assertThatThrownBy(
            () ->
                storeA.inTerm(
                    a,
                    dsl -> {
                      insertWork(dsl, e, "node-a", a.token());
                      throw new IllegalStateException("work failed after its insert");
                    }))
        .isInstanceOf(IllegalStateException.class);
    // The caller's own SQLException, as the driver threw it: not a wrapper of the library's.
    assertThatThrownBy(
            () ->
                storeA.inTermWithConnection(
                    a,
                    c ->
                        c.createStatement()
                            .executeUpdate("insert into no_such_table_x values (1)")))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("no_such_table_x");

    assertThat(workRows(e)).isEmpty();
    assertThat(storeA.renew(a).token()).isEqualTo(a.token());
  }

  int insertWork(org.jooq.DSLContext dsl, String election, String writer, FencingToken token) {
    return dsl.insertInto(table(unquotedName(workTable)))
        .columns(
            field(unquotedName("election")),
            field(unquotedName("writer")),
            field(unquotedName("token")))
        .values(election, writer, token.value())
        .execute();
  }

  long insertWork(Connection c, String election, String writer, FencingToken token)
      throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement(
            "insert into " + workTable + " (election, writer, token) values (?, ?, ?)")) {
      s.setString(1, election);
      s.setString(2, writer);
      s.setLong(3, token.value());
      return s.executeUpdate();
    }
  }

  List<String> workRows(String election) {
    try (Connection c = poolB.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "select writer from " + workTable + " where election = ? order by token")) {
      s.setString(1, election);
      List<String> writers = new ArrayList<>();
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          writers.add(rs.getString(1));
        }
      }
      return writers;
    } catch (SQLException ex) {
      throw new IllegalStateException(ex);
    }
  }

  // ---- schema ----

  @Test
  void createsTheTableOnFirstUse() {
    String created = "baton_it_created_" + suffix;
    extraTables.add(created);
    try (JdbcLeaseStore store = JdbcLeaseStore.builder(poolA).table(created).build()) {
      assertThat(store.tryAcquire(election("created"), "node-a", LONG).isGranted()).isTrue();
    }
  }

  @Test
  void keepsItsTableInTheConfiguredSchema() throws SQLException {
    String schema = "baton_it_schema_" + suffix;
    execute(poolA, createSchemaSql(schema));
    try (JdbcLeaseStore a = JdbcLeaseStore.builder(poolA).schema(schema).build();
        JdbcLeaseStore b = JdbcLeaseStore.builder(poolB).schema(schema).build()) {
      String e = election("schema");
      Lease lease = grant(a, e, "node-a", SHORT);
      assertThat(b.tryAcquire(e, "node-b", LONG).isGranted()).isFalse();
      assertThat(a.renew(lease).token()).isEqualTo(lease.token());
      Lease taken = awaitGrant(b, e, "node-b", LONG);
      assertThat(taken.token().isNewerThan(lease.token())).isTrue();
      String guarded = b.inTerm(taken, dsl -> "guarded");
      assertThat(guarded).isEqualTo("guarded");
      assertThatThrownBy(() -> a.inTerm(lease, dsl -> "stale"))
          .isInstanceOf(LeaseLostException.class);
      a.release(lease);
      assertThat(b.read(e).orElseThrow().holder()).isEqualTo("node-b");
      try (Connection c = poolB.getConnection();
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("select count(*) from " + schema + ".baton_lease")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(1);
      }
    } finally {
      execute(poolA, dropSchemaSql(schema));
    }
  }

  @Test
  void aMissingTableThatMayNotBeCreatedIsAnErrorNamingTheTableAndTheDdlFile() throws SQLException {
    String missing = "baton_it_missing_" + suffix;
    extraTables.add(missing);
    Dialect dialect;
    try (JdbcLeaseStore store =
        JdbcLeaseStore.builder(poolA).table(missing).createTable(false).build()) {
      assertThatThrownBy(() -> store.tryAcquire(election("missing"), "node-a", LONG))
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining(missing)
          .hasMessageContaining("dev/baton/jdbc/schema-");
      dialect = Dialect.valueOf(displayName().toUpperCase(java.util.Locale.ROOT));

      // The file the message points to is the one that makes the store work.
      String ddl = LeaseTable.ddlFileText(dialect).replace("baton_lease", missing);
      try (Connection c = poolA.getConnection();
          Statement s = c.createStatement()) {
        s.execute(
            ddl.lines()
                .filter(l -> !l.startsWith("--"))
                .reduce("", (x, y) -> x + "\n" + y)
                .replace(";", ""));
      }
      assertThat(store.tryAcquire(election("missing"), "node-a", LONG).isGranted()).isTrue();
    }
  }

  @Test
  void aLeastPrivilegedUserRunsTheStoreOnAnExistingTable() throws SQLException {
    String user = "baton_it_rw_" + suffix;
    String e = election("least-privilege");
    storeA.read(e); // the table exists
    runAsAdmin(createUserSql(user, "pw-" + suffix, Optional.of(tableName)));
    try (HikariDataSource ds = pool(unprivilegedUrl(), "rw", user, "pw-" + suffix);
        JdbcLeaseStore store = JdbcLeaseStore.builder(ds).table(tableName).build()) {
      Lease a = grant(store, e, "node-a", LONG);
      assertThat(store.renew(a).token()).isEqualTo(a.token());
      assertThat(store.read(e).orElseThrow().holder()).isEqualTo("node-a");
      String checked = store.inTermWithConnection(a, c -> "checked");
      assertThat(checked).isEqualTo("checked");
      store.release(a);
      assertThat(store.read(e)).isEmpty();
    } finally {
      runAsAdmin(dropUserSql(user));
    }
  }

  @Test
  void aMissingTableWithoutThePermissionToCreateItIsAnErrorNamingTheTableAndTheDdlFile()
      throws SQLException {
    String user = "baton_it_nocreate_" + suffix;
    String missing = "baton_it_nocreate_" + suffix;
    extraTables.add(missing);
    runAsAdmin(createUserSql(user, "pw-" + suffix, Optional.empty()));
    try (HikariDataSource ds = pool(unprivilegedUrl(), "nocreate", user, "pw-" + suffix);
        JdbcLeaseStore store = JdbcLeaseStore.builder(ds).table(missing).build()) {
      assertThatThrownBy(() -> store.tryAcquire(election("no-create"), "node-a", LONG))
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining(missing)
          .hasMessageContaining("dev/baton/jdbc/schema-")
          .hasMessageContaining("grant CREATE");
    } finally {
      runAsAdmin(dropUserSql(user));
    }
  }

  @Test
  void aUserWithoutPrivilegesOnTheTableIsToldSo() throws SQLException {
    String user = "baton_it_noright_" + suffix;
    String e = election("no-privilege");
    storeA.read(e); // the table exists
    runAsAdmin(
        createUserSql(
            user, "pw-" + suffix, Optional.of(workTable))); // rights on another table only
    try (HikariDataSource ds = pool(unprivilegedUrl(), "noright", user, "pw-" + suffix);
        JdbcLeaseStore store = JdbcLeaseStore.builder(ds).table(tableName).build()) {
      assertThatThrownBy(() -> store.tryAcquire(e, "node-a", LONG))
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining(
              ": "
                  + Failures.Kind.PERMISSION.phrase
                  + ": could not acquire (table "
                  + tableName
                  + " on jdbc ("
                  + displayName()
                  + ")): ");
    } finally {
      runAsAdmin(dropUserSql(user));
    }
  }

  void runAsAdmin(List<String> statements) throws SQLException {
    for (String sql : statements) {
      execute(poolA, sql);
    }
  }

  @Test
  void runsOnTheCallersDslContextAndGivesGuardedWorkItsConfiguration() {
    String e = election("dsl");
    Settings callersSettings = new Settings().withRenderQuotedNames(RenderQuotedNames.NEVER);
    DSLContext callers = DSL.using(poolA, SQLDialect.DEFAULT, callersSettings);
    try (JdbcLeaseStore store = JdbcLeaseStore.builder(callers).table(tableName).build()) {
      Lease a = grant(store, e, "node-a", LONG);

      Settings seen =
          store.inTerm(
              a,
              dsl -> {
                insertWork(dsl, e, "node-a", a.token());
                return dsl.settings();
              });

      assertThat(seen.getRenderQuotedNames()).isEqualTo(RenderQuotedNames.NEVER);
      store.release(a);
    }
    assertThat(workRows(e)).containsExactly("node-a");
    assertThat(poolA.isClosed()).isFalse();
  }

  @Test
  void closingTheStoreLeavesTheCallersDataSourceOpen() throws SQLException {
    JdbcLeaseStore store = JdbcLeaseStore.builder(poolA).table(tableName).build();
    store.read(election("close"));

    store.close();

    assertThat(poolA.isClosed()).isFalse();
    try (Connection c = poolA.getConnection()) {
      assertThat(c.isValid(2)).isTrue();
    }
    assertThatThrownBy(() -> store.read(election("closed")))
        .isInstanceOf(IllegalStateException.class);
  }

  // ---- errors ----

  @Test
  void aServerThatRefusesConnectionsIsAStoreErrorNotAHang() throws IOException {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    // H2's client retries a refused connect for longer than the pool waits: the pool's timeout
    // comes first.
    assertThat(assertStoreErrorWithinBound(urlOnPort(port)).getMessage())
        .containsPattern(
            ": ("
                + Failures.Kind.UNREACHABLE.phrase
                + "|"
                + java.util.regex.Pattern.quote(Failures.Kind.NO_CONNECTION.phrase)
                + ")"
                + ": could not connect to learn which database it is \\(table baton_lease on jdbc\\): ");
  }

  @Test
  void aServerThatNeverAnswersIsAStoreErrorNotAHang() throws IOException {
    List<Socket> accepted = new CopyOnWriteArrayList<>();
    try (ServerSocket blackhole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    accepted.add(blackhole.accept());
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              },
              "blackhole-" + suffix);
      acceptor.setDaemon(true);
      acceptor.start();
      assertStoreErrorWithinBound(urlOnPort(blackhole.getLocalPort()));
    } finally {
      for (Socket s : accepted) {
        s.close();
      }
    }
  }

  /**
   * Faults of the link between a node and its database, made by a proxy in front of the database's
   * own socket. A database that has one declares a {@code @Nested} subclass that names it; H2 in a
   * file has none (other processes reach it through the server AUTO_SERVER runs inside H2), so its
   * contract has no such class rather than tests that skip.
   */
  abstract class ThroughAProxy {

    /** The database's own TCP address, for a proxy in front of it. */
    abstract InetSocketAddress server() throws SQLException;

    /**
     * A partition: the node's connections stay open but nothing comes back. Every kind of call
     * fails with a store error by about its call timeout, whether it meets the silence in a
     * statement, in the pool's check of an idle connection or while waiting for a new one; after
     * the heal the store works again and the lease is still there. The bound only catches a hang or
     * a call that waits for the driver's own, longer timeouts (seconds more); the conformance suite
     * holds calls to the renew deadline.
     */
    @Test
    void everyCallThroughABlackholeFailsByAboutItsCallTimeout() throws Exception {
      Duration callTimeout = Duration.ofSeconds(1);
      Duration bound = callTimeout.plusMillis(2500);
      String e = election("blackhole");
      InetSocketAddress server = server();
      try (FaultProxy proxy = FaultProxy.start(server)) {
        try (LeaseStore store = openStore(urlOnPort(proxy.port()), callTimeout)) {
          // A fresh pool connects on the first call, which a busy machine may not finish in time.
          AtomicReference<Lease> granted = new AtomicReference<>();
          await()
              .atMost(Duration.ofSeconds(30))
              .ignoreExceptionsInstanceOf(LeaseStoreException.class)
              .until(
                  () ->
                      store
                          .tryAcquire(e, "node-a", LONG)
                          .lease()
                          .map(l -> granted.compareAndSet(null, l))
                          .orElse(false));
          Lease lease = granted.get();
          proxy.blackhole();

          Map<String, Runnable> calls = new LinkedHashMap<>();
          calls.put("renew", () -> store.renew(lease));
          calls.put("tryAcquire", () -> store.tryAcquire(e, "node-b", LONG));
          calls.put("read", () -> store.read(e));
          calls.put("release", () -> store.release(lease));
          calls.put("read again", () -> store.read(e));
          Map<String, Duration> took = new LinkedHashMap<>();
          calls.forEach(
              (name, call) -> {
                long t0 = System.nanoTime();
                assertThatThrownBy(call::run).as(name).isInstanceOf(LeaseStoreException.class);
                took.put(name, Duration.ofNanos(System.nanoTime() - t0));
              });
          System.out.println(
              displayName()
                  + ": calls through a blackhole with a call timeout of "
                  + callTimeout.toMillis()
                  + " ms took "
                  + took);
          assertThat(took).allSatisfy((name, d) -> assertThat(d).as(name).isLessThan(bound));

          proxy.heal();
          await()
              .atMost(Duration.ofSeconds(30))
              .ignoreExceptionsInstanceOf(LeaseStoreException.class)
              .until(() -> store.read(e).isPresent());
          assertThat(store.renew(lease).token()).isEqualTo(lease.token());
          store.release(lease);
          assertThat(storeB.read(e)).isEmpty();
        }
      }
    }

    /**
     * A link that stops acknowledging: nothing the node sends is read, so a large statement fills
     * the socket buffers and the driver blocks in a write, which no socket read timeout bounds. A
     * batch renewal of a thousand long names is such a statement; it must still fail by about its
     * call timeout, and the store work again after the heal.
     */
    @Test
    void aBatchRenewalThroughALinkThatStopsReadingFailsByAboutItsCallTimeout() throws Exception {
      Duration callTimeout = Duration.ofSeconds(2);
      InetSocketAddress server = server();
      String candidate = "node-" + "c".repeat(200);
      List<Lease> leases = new ArrayList<>();
      for (int i = 0; i < JdbcLeaseStore.RENEW_BATCH_LIMIT; i++) {
        leases.add(
            grant(storeA, "stalled-" + i + "-" + "e".repeat(200) + "-" + suffix, candidate, LONG));
      }
      // Loopback's buffers absorb megabytes, a real link's window far less than such a batch.
      try (FaultProxy proxy = FaultProxy.start(server, 8 * 1024)) {
        try (LeaseStore store = openStore(urlWithSmallSendBuffer(proxy.port()), callTimeout)) {
          // A fresh pool connects on the first call, which a busy machine may not finish in time.
          // A few renewals only: a busy machine need not push the whole batch through in time.
          List<Lease> few = leases.subList(0, 10);
          await()
              .atMost(Duration.ofSeconds(30))
              .ignoreExceptionsInstanceOf(LeaseStoreException.class)
              .until(() -> store.renewAll(few).stream().allMatch(r -> r.lease().isPresent()));
          proxy.stopReadingRequests();

          long t0 = System.nanoTime();
          List<Renewal> outcomes =
              assertTimeoutPreemptively(Duration.ofSeconds(30), () -> store.renewAll(leases));
          Duration took = Duration.ofNanos(System.nanoTime() - t0);
          System.out.println(
              displayName()
                  + ": a batch renewal of "
                  + leases.size()
                  + " leases through a link that stopped reading, call timeout "
                  + callTimeout.toMillis()
                  + " ms, took "
                  + took.toMillis()
                  + " ms");
          assertThat(outcomes)
              .allSatisfy(
                  r -> assertThat(r.failure()).containsInstanceOf(LeaseStoreException.class));
          assertThat(took).isLessThan(callTimeout.plusMillis(2500));

          proxy.heal();
          await()
              .atMost(Duration.ofSeconds(30))
              .ignoreExceptionsInstanceOf(LeaseStoreException.class)
              .until(() -> store.renewAll(few).stream().allMatch(r -> r.lease().isPresent()));
        }
      }
    }
  }

  /** A store on this class's table as the provider opens one, at {@code url}. */
  private LeaseStore openStore(String url, Duration callTimeout) {
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, url);
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, user());
    p.setProperty(JdbcLeaseStoreProvider.TABLE, tableName);
    p.setProperty(JdbcLeaseStoreProvider.CALL_TIMEOUT, callTimeout.toMillis() + "ms");
    return new JdbcLeaseStoreProvider().open(ElectionProperties.of(p));
  }

  private Throwable assertStoreErrorWithinBound(String url) {
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, url);
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, user());
    p.setProperty(JdbcLeaseStoreProvider.CALL_TIMEOUT, "1s");
    try (LeaseStore store = new JdbcLeaseStoreProvider().open(ElectionProperties.of(p))) {
      // A generous bound that only a hang exceeds; how fast it fails is not the point.
      Throwable thrown =
          assertTimeoutPreemptively(
              Duration.ofSeconds(30),
              () ->
                  org.assertj.core.api.Assertions.catchThrowable(
                      () -> store.tryAcquire(election("unreachable"), "node-a", LONG)));
      assertThat(thrown).isInstanceOf(LeaseStoreException.class);
      return thrown;
    }
  }

  @Test
  void badCredentialsAreAStoreErrorThatNeverShowsThePassword() {
    String password = "pw-" + UUID.randomUUID();
    PrintStream originalErr = System.err;
    ByteArrayOutputStream logged = new ByteArrayOutputStream();
    Throwable thrown;
    Properties properties = badCredentials(password);
    properties.setProperty(JdbcLeaseStoreProvider.CALL_TIMEOUT, "1s");
    System.setErr(new PrintStream(logged, true, StandardCharsets.UTF_8));
    try (LeaseStore store = new JdbcLeaseStoreProvider().open(ElectionProperties.of(properties))) {
      thrown =
          org.assertj.core.api.Assertions.catchThrowable(
              () -> store.tryAcquire(election("credentials"), "node-a", LONG));
    } finally {
      System.setErr(originalErr);
    }

    assertThat(thrown)
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining(": " + Failures.Kind.CREDENTIALS.phrase + ": could not ");
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      assertThat(String.valueOf(t.getMessage())).doesNotContain(password);
    }
    assertThat(logged.toString(StandardCharsets.UTF_8)).doesNotContain(password);
  }

  // ---- concurrency ----

  /** Who holds the lease according to the grants seen so far, and until when it may rely on it. */
  private record Holding(String candidate, FencingToken token, long validUntilNanos) {}

  @Test
  void concurrentCandidatesNeverHoldTheLeaseAtTheSameTime() throws Exception {
    String e = election("fuzz");
    Duration ttl = Duration.ofMillis(500);
    int threads = 6;
    int targetGrants = 40;
    AtomicReference<Holding> current = new AtomicReference<>();
    AtomicInteger grants = new AtomicInteger();
    AtomicInteger takeovers = new AtomicInteger(); // of a lease whose holder crashed
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        LeaseStore store = i % 2 == 0 ? storeA : storeB;
        String me = "fuzz-" + i;
        workers.add(
            pool.submit(
                () -> {
                  long awayUntil = System.nanoTime();
                  while (!stop.get() && grants.get() < targetGrants) {
                    if (System.nanoTime() - awayUntil < 0) {
                      LockSupport.parkNanos(MILLISECONDS.toNanos(3));
                      continue;
                    }
                    long t0 = System.nanoTime();
                    Acquisition acquisition = store.tryAcquire(e, me, ttl);
                    long returned = System.nanoTime();
                    if (!acquisition.isGranted()) {
                      LockSupport.parkNanos(MILLISECONDS.toNanos(3));
                      continue;
                    }
                    Lease lease = acquisition.lease().orElseThrow();
                    Holding mine = new Holding(me, lease.token(), t0 + ttl.toNanos());
                    Holding previous = current.getAndSet(mine);
                    // A thread descheduled past its own TTL holds a stale grant; it judges nothing.
                    boolean fresh = returned - mine.validUntilNanos() < 0;
                    if (fresh && previous != null) {
                      if (!previous.candidate().equals(me)
                          && returned - previous.validUntilNanos() < 0) {
                        violations.add(
                            me
                                + " was granted "
                                + lease.token()
                                + " while "
                                + previous
                                + " was valid");
                      }
                      if (!lease.token().isNewerThan(previous.token())) {
                        violations.add(
                            me + " got token " + lease.token() + " after " + previous.token());
                      }
                    }
                    if (previous != null && !previous.candidate().equals(me)) {
                      takeovers.incrementAndGet();
                    }
                    if (grants.incrementAndGet() % 6 != 0) {
                      current.compareAndSet(mine, null);
                      store.release(lease);
                    } else {
                      // It crashes: it neither releases nor renews, and comes back only after its
                      // lease expired, so that another candidate has to take the lease over.
                      awayUntil = mine.validUntilNanos() + MILLISECONDS.toNanos(100);
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> worker : workers) {
        worker.get(120, TimeUnit.SECONDS);
      }
    } finally {
      stop.set(true);
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    assertThat(grants.get()).isGreaterThanOrEqualTo(targetGrants);
    assertThat(takeovers.get()).as("takeovers of expired leases").isPositive();
    assertThat(violations).isEmpty();
  }
}
