package dev.baton.jdbc;

import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.election.Renewal;
import dev.baton.election.Subscription;
import dev.baton.jdbc.LeaseStatements.LeaseRow;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jooq.Configuration;
import org.jooq.ConnectionProvider;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.DataSourceConnectionProvider;
import org.jooq.impl.DefaultConnectionProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaseStore} on one SQL table (default {@value #DEFAULT_TABLE}): PostgreSQL, MariaDB,
 * MySQL or H2, chosen from the connection.
 *
 * <p>How it keeps the contract:
 *
 * <ul>
 *   <li>An acquire is one upsert whose condition (free, expired, or already the candidate's) the
 *       database evaluates against its own clock, never a read followed by a write. Two first
 *       acquires racing for a new election are resolved by the database, not by a duplicate-key
 *       error. Each call is one round trip where the database allows (PostgreSQL always; MariaDB
 *       but for a batch renewal), its SQL put together once per store and run as plain JDBC.
 *   <li>The {@code term} column is the fencing token; every grant adds one, renewals keep it. Rows
 *       are never deleted, so tokens keep increasing across releases.
 *   <li>A renewal and a release are updates guarded by holder and term; a renewal also requires the
 *       lease to be unexpired by the database's clock.
 *   <li>On PostgreSQL, {@link #watch} hears grants and releases at commit through LISTEN/NOTIFY on
 *       one connection of the store's, and reports expiry too: grants and renewals say when their
 *       lease runs out, and the LISTEN thread wakes the followers then. Followers send nothing
 *       while a leader renews.
 *   <li>{@link #inTerm} runs the caller's own SQL in a transaction that commits only while the
 *       lease row still shows the caller's term.
 * </ul>
 *
 * <p>Every call has a deadline, the call timeout after it started: before each round trip the
 * connection's socket read timeout is set to what is left of it, so a call through a network that
 * drops every packet fails by its deadline, and a connection that the pool hands out too late fails
 * the call at once. Statements also carry a JDBC query timeout, the call timeout rounded up past
 * the next whole second, as a backstop for a database that is alive but slow. Waiting for a
 * connection is the pool's part: keep its connection timeout, plus its validation timeout, under
 * the call timeout (the provider's pool does). H2 over TCP has no per-call read timeout; give its
 * URL a {@code NETWORK_TIMEOUT} (the provider adds one). The table is not looked for in advance:
 * the first call that finds it missing creates it, unless that is turned off; the DDL ships in the
 * jar as {@code dev/baton/jdbc/schema-<database>.sql}. A store built from a caller's {@code
 * DataSource} or {@code DSLContext} never closes it.
 */
public final class JdbcLeaseStore implements LeaseStore {

  public static final String DEFAULT_TABLE = LeaseTable.DEFAULT_NAME;
  public static final Duration DEFAULT_CALL_TIMEOUT = CallTimeout.DEFAULT;

  private static final Logger log = LoggerFactory.getLogger(JdbcLeaseStore.class);

  private final ConnectionProvider connections;
  private final Transactions transactions;
  private final StoreCalls calls;
  private final Configuration callerConfiguration;
  private final LeaseTable table;
  private final Duration callTimeout;
  private final AutoCloseable ownedPool;
  private final MonotonicClock clock;

  private final Object setupLock = new Object();
  private volatile PgListener listener; // written under setupLock
  private volatile boolean closed; // set under setupLock

  private JdbcLeaseStore(Builder b) {
    this.connections = b.connections;
    this.clock = b.clock;
    this.transactions = new Transactions(b.connections, b.clock);
    this.callerConfiguration = b.callerConfiguration;
    this.table = new LeaseTable(Optional.ofNullable(b.schema), b.table);
    this.callTimeout = b.callTimeout;
    this.ownedPool = b.ownedPool;
    this.calls =
        new StoreCalls(transactions, table, b.createTable, b.callTimeout, b.clock, this::checkOpen);
  }

  /** A store on the caller's {@code DataSource} (a pool), which the store never closes. */
  public static Builder builder(DataSource dataSource) {
    requireNonNull(dataSource, "dataSource");
    return new Builder(new DataSourceConnectionProvider(dataSource), null, dataSource);
  }

  /**
   * A store on the caller's {@code DSLContext}, which must get its connections from a {@code
   * DataSource} or pool: electors call the store concurrently. The store never closes it; guarded
   * writes see its configuration.
   */
  public static Builder builder(DSLContext dsl) {
    requireNonNull(dsl, "dsl");
    ConnectionProvider provider = dsl.configuration().connectionProvider();
    if (provider instanceof DefaultConnectionProvider) {
      throw new ConfigurationException(
          "dsl: a DSLContext over a single Connection cannot serve concurrent electors; build it from a DataSource (DSL.using(dataSource, dialect))");
    }
    return new Builder(provider, dsl.configuration(), dsl);
  }

  /** Settings of a store; {@link #build()} validates them once. */
  public static final class Builder {
    private final ConnectionProvider connections;
    private final Configuration callerConfiguration;
    private String table = DEFAULT_TABLE;
    private String schema;
    private boolean createTable = true;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;

    /** The DataSource or DSLContext the store was built on. */
    private final AutoCloseable client;

    private AutoCloseable ownedPool;
    private MonotonicClock clock = MonotonicClock.system();

    private Builder(
        ConnectionProvider connections, Configuration callerConfiguration, Object client) {
      this.connections = connections;
      this.callerConfiguration = callerConfiguration;
      this.client = client instanceof AutoCloseable c ? c : null;
    }

    /**
     * The lease table's name (default {@value JdbcLeaseStore#DEFAULT_TABLE}): a plain identifier.
     */
    public Builder table(String table) {
      this.table = LeaseTable.checkIdentifier("table", requireNonNull(table, "table"));
      return this;
    }

    /** The schema (on MariaDB/MySQL: database) of the table; by default the connection's own. */
    public Builder schema(String schema) {
      this.schema = LeaseTable.checkIdentifier("schema", requireNonNull(schema, "schema"));
      return this;
    }

    /** Whether the store may create a missing table on first use (default true). */
    public Builder createTable(boolean createTable) {
      this.createTable = createTable;
      return this;
    }

    /**
     * How long one call (acquire, renew, release, read, the check of a guarded write) may take,
     * from its start until it returns or fails (default 3 s): at most half the renew deadline it is
     * used with ({@link CallTimeout}). It bounds every round trip of the call through the socket
     * read timeout; the JDBC query timeout of its statements is a whole second or more past it.
     */
    public Builder callTimeout(Duration callTimeout) {
      this.callTimeout = CallTimeout.check("callTimeout", callTimeout);
      return this;
    }

    /** The clock that measures each call's deadline; the system's by default. */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    /** For the provider: the store closes the client it was given, which the provider built. */
    Builder closesClient() {
      if (client == null) {
        throw new IllegalStateException("the DataSource cannot be closed: it is not AutoCloseable");
      }
      this.ownedPool = client;
      return this;
    }

    public JdbcLeaseStore build() {
      return new JdbcLeaseStore(this);
    }
  }

  /** Work inside a guarded transaction on plain JDBC; see {@link #inTermWithConnection}. */
  @FunctionalInterface
  public interface ConnectionWork<T> {
    T run(Connection connection) throws SQLException;
  }

  // ---- the lease contract ----

  /**
   * The most leases one {@link #renewAll} takes; it renews them in one statement (PostgreSQL) or
   * one per TTL.
   */
  static final int RENEW_BATCH_LIMIT = 1000;

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    checkName("election", election);
    checkName("candidate", candidate);
    long ttlMillis = effectiveTtlMillis(ttl);
    return calls.call(
        election,
        "acquire",
        (s, deadline) -> {
          LeaseStatements.Decision decision =
              calls
                  .inConnection(
                      s.acquireNeedsTransaction(),
                      deadline,
                      c -> s.acquire(c, election, candidate, ttlMillis, deadline))
                  .orElseThrow(StoreCalls.RowChangedMeanwhile::new);
          LeaseRow row = decision.row();
          // The statement says whether it granted: a refusal may name this candidate id too (a
          // live lease is never granted again), read back under the decision's lock (on H2 after
          // an update that refused without one; see LeaseStatements.acquire).
          if (decision.granted()) {
            return Acquisition.granted(
                new Lease(
                    election,
                    candidate,
                    FencingToken.of(row.term()),
                    Duration.ofMillis(ttlMillis),
                    ""));
          }
          if (!row.isLive()) {
            throw new StoreCalls
                .RowChangedMeanwhile(); // it ran out between the decision and the read-back
          }
          heard(election, row);
          return Acquisition.held(record(election, row));
        });
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    long ttlMillis = effectiveTtlMillis(lease.ttl());
    return calls.call(
        lease.election(), "renew", (s, deadline) -> renewAlone(s, lease, ttlMillis, deadline));
  }

  /** One renewal in its own statement, which waits for a row lock another transaction holds. */
  private Lease renewAlone(LeaseStatements s, Lease lease, long ttlMillis, long deadline)
      throws SQLException {
    long started = clock.nanoTime();
    boolean lockFirst = s.dialect().bindsLockWaitInSql();
    Transactions.Task<Lease> renewal =
        c -> {
          if (lockFirst) {
            s.lockWithin(c, lease.election(), deadline);
          }
          if (s.renew(
              c, lease.election(), lease.candidate(), lease.token().value(), ttlMillis, deadline)) {
            return lease.renewed(Duration.ofMillis(ttlMillis), lease.handle());
          }
          return renewedOrLost(
              lease, ttlMillis, s.read(c, lease.election(), deadline), clock.nanoTime() - started);
        };
    // The row lock taken first must last until the update: one transaction.
    return lockFirst
        ? transactions.inTransaction(deadline, renewal)
        : transactions.autoCommitted(deadline, renewal);
  }

  /**
   * Renews up to {@link #RENEW_BATCH_LIMIT} leases on one connection: on PostgreSQL in one
   * statement, which also tells followers the new expiries in a few notifications; elsewhere in one
   * update per TTL in one transaction, followed in that transaction by a JDBC batch of single
   * renewals only when an update renewed fewer leases than it named. A lease whose row shows
   * another holder, another term, or an expired lease fails with the {@link LeaseLostException}
   * {@link #renew} would throw; when the database cannot answer, every lease fails with the same
   * {@link LeaseStoreException}.
   */
  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    requireNonNull(leases, "leases");
    int n = leases.size();
    if (n == 0) {
      return List.of();
    }
    if (n > RENEW_BATCH_LIMIT) {
      throw new IllegalArgumentException(
          "renewAll takes at most "
              + RENEW_BATCH_LIMIT
              + " leases (renewBatchLimit), but got "
              + n);
    }
    List<String> elections = new ArrayList<>(n);
    List<String> candidates = new ArrayList<>(n);
    long[] tokens = new long[n];
    long[] ttls = new long[n];
    for (int i = 0; i < n; i++) {
      Lease lease = requireNonNull(leases.get(i), "leases[" + i + "]");
      elections.add(lease.election());
      candidates.add(lease.candidate());
      tokens[i] = lease.token().value();
      ttls[i] = effectiveTtlMillis(lease.ttl());
    }
    String what = n == 1 ? elections.get(0) : elections.get(0) + " and " + (n - 1) + " more";
    try {
      return calls.call(
          what,
          "renew " + n + " leases",
          (s, deadline) -> {
            long started = clock.nanoTime();
            boolean[] surely =
                calls.inConnection(
                    s.renewAllNeedsTransaction(),
                    deadline,
                    c -> s.renewAll(c, elections, candidates, tokens, ttls, deadline));
            List<String> unsure = new ArrayList<>();
            for (int i = 0; i < n; i++) {
              if (!surely[i]) {
                unsure.add(elections.get(i));
              }
            }
            Map<String, LeaseRow> rows =
                unsure.isEmpty()
                    ? Map.of()
                    : transactions.autoCommitted(deadline, c -> s.readAll(c, unsure, deadline));
            long took = clock.nanoTime() - started;
            List<Renewal> outcomes = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
              Lease lease = leases.get(i);
              if (surely[i]) {
                outcomes.add(
                    Renewal.renewed(lease.renewed(Duration.ofMillis(ttls[i]), lease.handle())));
              } else {
                try {
                  outcomes.add(
                      Renewal.renewed(
                          renewedOrLost(
                              lease,
                              ttls[i],
                              Optional.ofNullable(rows.get(lease.election())),
                              took)));
                } catch (LeaseLostException e) {
                  outcomes.add(Renewal.failed(e));
                } catch (LeaseStoreException e) {
                  // A live row of this lease that the batch left out: another transaction held it
                  // (a guarded write, a candidate's acquire). Alone, its renewal waits for that
                  // lock within the call's deadline; the others' outcomes are already settled.
                  outcomes.add(renewedAloneOrFailed(s, lease, ttls[i], deadline));
                }
              }
            }
            return outcomes;
          });
    } catch (LeaseStoreException e) {
      return Collections.nCopies(n, Renewal.failed(e));
    }
  }

  private Renewal renewedAloneOrFailed(
      LeaseStatements s, Lease lease, long ttlMillis, long deadline) {
    try {
      return Renewal.renewed(renewAlone(s, lease, ttlMillis, deadline));
    } catch (LeaseLostException e) {
      return Renewal.failed(e);
    } catch (SQLException | DataAccessException | LeaseStoreException e) {
      return Renewal.failed(calls.failure(lease.election(), "renew", e));
    }
  }

  @Override
  public int renewBatchLimit() {
    return RENEW_BATCH_LIMIT;
  }

  /**
   * The renewed lease of a renewal whose update counted no row, when the row read after it shows
   * the lease renewed since the call began: a MariaDB renewal within the grant's millisecond
   * changes nothing and may count no row. A row of this lease that is live but was not renewed (a
   * guarded write held it, and the batch left it out) is no renewal: a leader that counted it one
   * would lead past the row's expiry. Its lease is not lost either; the renewal failed, and the
   * elector retries until its renew deadline.
   *
   * @param sinceCallBegan nanoseconds from the call's start to after the read: a renewal at any
   *     moment since leaves at least {@code ttlMillis} minus that much on the row
   */
  static Lease renewedOrLost(
      Lease lease, long ttlMillis, Optional<LeaseRow> row, long sinceCallBegan) {
    long token = lease.token().value();
    String candidate = lease.candidate();
    if (row.isPresent()
        && row.get().isLive()
        && candidate.equals(row.get().holder())
        && row.get().term() == token) {
      long left = row.get().expiresInMillis();
      if (left + TimeUnit.NANOSECONDS.toMillis(sinceCallBegan) >= ttlMillis) {
        return lease.renewed(Duration.ofMillis(ttlMillis), lease.handle());
      }
      throw new LeaseStoreException(
          lease.election(),
          "the renewal of "
              + candidate
              + " with token "
              + token
              + " did not reach its row (another transaction, such as a"
              + " guarded write, holds it); the lease is still this holder's for "
              + left
              + " ms");
    }
    String otherHolder = row.filter(LeaseRow::isLive).map(LeaseRow::holder).orElse(null);
    throw new LeaseLostException(
        lease.election(),
        "the lease of "
            + candidate
            + " with token "
            + token
            + " is gone: "
            + (otherHolder == null
                ? "it expired or was released"
                : "now held by " + otherHolder + " with token " + row.get().term()),
        otherHolder);
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    calls.call(
        lease.election(),
        "release",
        (s, deadline) ->
            transactions.autoCommitted(
                deadline,
                c ->
                    s.release(
                        c, lease.election(), lease.candidate(), lease.token().value(), deadline)));
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    checkName("election", election);
    return calls.call(
        election,
        "read",
        (s, deadline) -> {
          Optional<LeaseRow> row =
              transactions
                  .autoCommitted(deadline, c -> s.read(c, election, deadline))
                  .filter(LeaseRow::isLive);
          row.ifPresent(r -> heard(election, r));
          return row.map(r -> record(election, r));
        });
  }

  /**
   * On PostgreSQL, runs {@code changed} when the election is released or granted, and when its
   * lease runs out without a renewal (on the store's LISTEN thread; it must not block). Empty on
   * the other databases: followers poll there.
   *
   * <p>The first watch asks the pool for a connection (to find out which database it is, and for
   * the LISTEN) only once a call already under way has come back (at most a call timeout): a fresh
   * pool has one connection at first, and the store's first acquire should not wait for it.
   *
   * @throws LeaseStoreException when the database cannot be reached to find out which it is
   */
  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    checkName("election", election);
    requireNonNull(changed, "changed");
    long deadline = calls.deadline();
    if (calls.dialectIfKnown() == null) {
      // The call under way finds out which database it is; asking the pool meanwhile would put
      // this watch ahead of that call for the pool's first connection.
      calls.awaitFirstAnswer(deadline);
    }
    LeaseStatements s = calls.statements(election, deadline);
    if (!s.dialect().canNotify()) {
      return Optional.empty();
    }
    PgListener l = listener;
    if (l == null) {
      calls.awaitFirstAnswer(deadline);
      synchronized (setupLock) {
        checkOpen();
        if (listener == null) {
          listener = new PgListener(connections, s, table.channel(), callTimeout, clock);
        }
        l = listener;
      }
    }
    return Optional.of(l.add(election, changed));
  }

  /**
   * On PostgreSQL, tells {@code lost} when the LISTEN thread hears a grant or a release of the
   * election and the row, read then, no longer names this lease's holder and term; renewals (the
   * leader's own among them) notify too, but are never read for. Empty on MariaDB, MySQL and H2,
   * which cannot notify: their leaders learn at the next renewal. A row deleted by hand notifies
   * nobody; the next renewal finds it gone.
   */
  @Override
  public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    requireNonNull(lease, "lease");
    requireNonNull(lost, "lost");
    checkName("election", lease.election());
    Dialect d = calls.dialectIfKnown();
    if (d == null || !d.canNotify()) {
      // A store that granted the lease knows its database; one that does not cannot listen yet.
      return Optional.empty();
    }
    PgListener l = listener;
    if (l == null) {
      long deadline = calls.deadline();
      LeaseStatements s = calls.statements(lease.election(), deadline);
      synchronized (setupLock) {
        checkOpen();
        if (listener == null) {
          listener = new PgListener(connections, s, table.channel(), callTimeout, clock);
        }
        l = listener;
      }
    }
    return Optional.of(
        l.addLeaseWatch(lease.election(), lease.candidate(), lease.token().value(), lost));
  }

  /** True on PostgreSQL, whose watch also reports a lease that ran out: followers need not poll. */
  @Override
  public boolean watchReportsExpiry() {
    Dialect d = calls.dialectIfKnown();
    return d != null && d.canNotify();
  }

  /** Election names are kept in a {@code varchar(255)} primary key: 1 to 255 characters. */
  @Override
  public void checkElectionName(String election) {
    checkName("election", election);
  }

  /** {@code jdbc (PostgreSQL)} once the store has talked to its database, {@code jdbc} before. */
  @Override
  public String describe() {
    return calls.describe();
  }

  /** Stops the LISTEN thread and closes the pool the provider built; never a caller's. */
  @Override
  public void close() {
    PgListener l;
    synchronized (setupLock) {
      if (closed) {
        return;
      }
      closed = true;
      l = listener;
      listener = null;
    }
    if (l != null) {
      l.close();
    }
    if (ownedPool != null) {
      try {
        ownedPool.close();
      } catch (Exception e) {
        log.warn("Closing the connection pool of {} failed", describe(), e);
      }
    }
  }

  // ---- guarded writes ----

  /**
   * Runs {@code work} in one transaction that commits only if, inside that transaction, the lease
   * row still shows this lease's holder and term unexpired. The row stays locked until commit, so
   * no other candidate can be granted in between; keep the work short, since the holder's own
   * renewal also waits for it. The work must not commit or start a transaction of its own ({@code
   * dsl.transaction(...)} would commit early): it already runs inside the guarded one.
   *
   * @return what {@code work} returned, after the commit
   * @throws LeaseLostException when the lease is no longer current; nothing was committed
   * @throws LeaseStoreException when the lease could not be checked
   */
  public <T> T inTerm(Lease lease, Function<DSLContext, T> work) {
    requireNonNull(lease, "lease");
    return inTerm(lease.election(), lease.candidate(), lease.token(), work);
  }

  /** {@link #inTerm(Lease, Function)} for an elector's term: its election, candidate and token. */
  public <T> T inTerm(
      String election, String candidate, FencingToken token, Function<DSLContext, T> work) {
    requireNonNull(work, "work");
    try {
      return guarded(election, candidate, token, (c, d) -> work.apply(callerDsl(c, d)));
    } catch (SQLException e) {
      // Only the commit throws it here (jOOQ work throws DataAccessException): jOOQ's own words.
      throw new DataAccessException(
          "guarded write in election '" + election + "' failed to commit: " + e.getMessage(), e);
    }
  }

  /**
   * {@link #inTerm(Lease, Function)} on plain JDBC: {@code work} gets the transaction's connection;
   * it must not commit, roll back or close it.
   *
   * @throws SQLException the one your work threw (or the commit's), as it was, after the rollback:
   *     plain JDBC code handles its own exceptions, not a library's wrapper of them
   * @throws LeaseLostException when the lease is no longer current; nothing ran
   * @throws LeaseStoreException when the lease could not be checked
   */
  public <T> T inTermWithConnection(Lease lease, ConnectionWork<T> work) throws SQLException {
    requireNonNull(lease, "lease");
    return inTermWithConnection(lease.election(), lease.candidate(), lease.token(), work);
  }

  /** {@link #inTermWithConnection(Lease, ConnectionWork)} for an elector's term. */
  public <T> T inTermWithConnection(
      String election, String candidate, FencingToken token, ConnectionWork<T> work)
      throws SQLException {
    requireNonNull(work, "work");
    return guarded(election, candidate, token, (c, d) -> work.run(c));
  }

  @FunctionalInterface
  private interface GuardedWork<T> {
    T run(Connection connection, Dialect dialect) throws SQLException;
  }

  private <T> T guarded(String election, String candidate, FencingToken token, GuardedWork<T> work)
      throws SQLException {
    checkName("election", election);
    checkName("candidate", candidate);
    requireNonNull(token, "token");
    long deadline = calls.deadline();
    LeaseStatements s = calls.statements(election, deadline);
    Dialect d = s.dialect();
    Connection c =
        calls.acquireConnection(election, "check the lease for a guarded write", deadline);
    Throwable failure = null;
    boolean previousAutoCommit = true;
    try {
      boolean current;
      Optional<LeaseRow> instead = Optional.empty();
      try {
        previousAutoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        int previousNetworkTimeout = Transactions.limitNetwork(c, deadline, clock);
        Throwable checkFailure = null;
        try {
          current = s.lockIfCurrent(c, election, candidate, token.value(), deadline);
          if (!current) {
            // Who holds it now, for the exception: the caller may want to say so or follow it.
            instead = s.read(c, election, deadline).filter(LeaseRow::isLive);
          }
        } catch (RuntimeException ex) {
          checkFailure = ex;
          throw ex;
        } finally {
          // The caller's own statements are not bound by the store's call timeout.
          Transactions.restoreNetwork(c, previousNetworkTimeout, checkFailure);
        }
      } catch (SQLException | DataAccessException e) {
        throw calls.failure(election, "check the lease for a guarded write", e);
      }
      if (!current) {
        throw new LeaseLostException(
            election,
            "guarded write refused: the lease of "
                + candidate
                + " with token "
                + token
                + " is no longer current ("
                + instead
                    .map(r -> "now held by " + r.holder() + " with token " + r.term())
                    .orElse("expired or released")
                + "); nothing was committed",
            instead.map(LeaseRow::holder).orElse(null));
      }
      T result = work.run(c, d);
      c.commit();
      return result;
    } catch (SQLException | RuntimeException | Error e) {
      failure = e;
      throw e;
    } finally {
      // Past the check the work is the caller's, under the connection's own network timeout.
      if (failure != null) {
        Transactions.rollback(c, failure);
      }
      Transactions.restoreAutoCommit(c, previousAutoCommit, failure);
      transactions.release(c, failure);
    }
  }

  private DSLContext callerDsl(Connection c, Dialect d) {
    if (callerConfiguration == null) {
      return DSL.using(c, d.jooq());
    }
    Configuration own = callerConfiguration.derive(new DefaultConnectionProvider(c));
    return DSL.using(own.dialect() == SQLDialect.DEFAULT ? own.derive(d.jooq()) : own);
  }

  // ---- plumbing ----

  /** Tells the LISTEN thread, if any, when a lease it may watch runs out. */
  private void heard(String election, LeaseRow row) {
    PgListener l = listener;
    if (l != null) {
      l.observed(election, row.expiresInMillis());
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("this " + describe() + " lease store is closed");
    }
  }

  private static LeaseRecord record(String election, LeaseRow row) {
    return new LeaseRecord(
        election,
        row.holder(),
        FencingToken.of(row.term()),
        Duration.ofMillis(row.ttlMillis()),
        Optional.of(Instant.ofEpochMilli(row.renewedAtEpochMillis())),
        Optional.of(Duration.ofMillis(Math.max(0, row.expiresInMillis()))));
  }

  private static void checkName(String what, String value) {
    requireNonNull(value, what);
    if (value.isEmpty() || value.length() > LeaseTable.MAX_NAME_LENGTH) {
      throw new ConfigurationException(
          what
              + " must have 1 to "
              + LeaseTable.MAX_NAME_LENGTH
              + " characters for the jdbc backend, but had "
              + value.length());
    }
  }

  /** The TTL in whole milliseconds, rounded up: the store never applies less than asked. */
  private static long effectiveTtlMillis(Duration ttl) {
    requireNonNull(ttl, "ttl");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive, but was " + ttl);
    }
    return ttl.toMillis() + (ttl.getNano() % 1_000_000 == 0 ? 0 : 1);
  }
}
