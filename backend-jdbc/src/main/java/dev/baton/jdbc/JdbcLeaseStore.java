package dev.baton.jdbc;

import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.ConfigurationException;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Subscription;
import dev.baton.jdbc.LeaseTable.LeaseRow;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jooq.Configuration;
import org.jooq.ConnectionProvider;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.conf.RenderNameCase;
import org.jooq.conf.RenderQuotedNames;
import org.jooq.conf.Settings;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.DataSourceConnectionProvider;
import org.jooq.impl.DefaultConfiguration;
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
 *       error.
 *   <li>The {@code term} column is the fencing token; every grant adds one, renewals keep it.
 *       Rows are never deleted, so tokens keep increasing across releases.
 *   <li>A renewal and a release are updates guarded by holder and term; a renewal also requires
 *       the lease to be unexpired by the database's clock.
 *   <li>On PostgreSQL, {@link #watch} hears releases and takeovers at commit through LISTEN/NOTIFY
 *       on one connection of the store's. It does not report expiry; followers still poll for it.
 *   <li>{@link #inTerm} runs the caller's own SQL in a transaction that commits only while the
 *       lease row still shows the caller's term.
 * </ul>
 *
 * <p>Every call has a deadline, the call timeout after it started: before each round trip the
 * connection's socket read timeout is set to what is left of it, so a call through a network that
 * drops every packet fails by its deadline, and a connection that the pool hands out too late
 * fails the call at once. Statements also carry a JDBC query timeout, the call timeout rounded
 * up past the next whole second, as a backstop for a database that is alive but slow. Waiting for a connection is the
 * pool's part: keep its connection timeout, plus its validation timeout, under the call timeout
 * (the provider's pool does). H2 over TCP has no per-call read timeout; give its URL a {@code
 * NETWORK_TIMEOUT} (the provider adds one). The table is created on
 * first use unless that is turned off; the DDL ships in the jar as {@code
 * dev/baton/jdbc/schema-<database>.sql}. A store built from a caller's {@code DataSource} or
 * {@code DSLContext} never closes it.
 */
public final class JdbcLeaseStore implements LeaseStore {

  public static final String DEFAULT_TABLE = LeaseTable.DEFAULT_NAME;
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(3);

  private static final Logger log = LoggerFactory.getLogger(JdbcLeaseStore.class);

  private final ConnectionProvider connections;
  private final Transactions transactions;
  private final Configuration callerConfiguration;
  private final LeaseTable table;
  private final boolean createTable;
  private final Duration callTimeout;
  private final Settings settings;
  private final AutoCloseable ownedPool;

  private final Object setupLock = new Object();
  /** Held while finding the database and preparing the table; waited for only until a call's deadline. */
  private final ReentrantLock preparing = new ReentrantLock();
  private volatile Dialect dialect; // written under preparing
  private volatile boolean tableReady; // written under preparing
  private PgListener listener; // guarded by setupLock
  private volatile boolean closed; // set under setupLock

  private JdbcLeaseStore(Builder b) {
    this.connections = b.connections;
    this.transactions = new Transactions(b.connections);
    this.callerConfiguration = b.callerConfiguration;
    this.table = new LeaseTable(Optional.ofNullable(b.schema), b.table);
    this.createTable = b.createTable;
    this.callTimeout = b.callTimeout;
    this.ownedPool = b.ownedPool;
    this.settings =
        new Settings()
            .withRenderQuotedNames(RenderQuotedNames.EXPLICIT_DEFAULT_UNQUOTED)
            .withRenderNameCase(RenderNameCase.AS_IS)
            .withExecuteLogging(false)
            .withQueryTimeout(queryTimeoutSeconds(b.callTimeout));
  }

  /** A store on the caller's {@code DataSource} (a pool), which the store never closes. */
  public static Builder builder(DataSource dataSource) {
    requireNonNull(dataSource, "dataSource");
    return new Builder(new DataSourceConnectionProvider(dataSource), null);
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
    return new Builder(provider, dsl.configuration());
  }

  /** Settings of a store; {@link #build()} validates them once. */
  public static final class Builder {
    private final ConnectionProvider connections;
    private final Configuration callerConfiguration;
    private String table = DEFAULT_TABLE;
    private String schema;
    private boolean createTable = true;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private AutoCloseable ownedPool;

    private Builder(ConnectionProvider connections, Configuration callerConfiguration) {
      this.connections = connections;
      this.callerConfiguration = callerConfiguration;
    }

    /** The lease table's name (default {@value JdbcLeaseStore#DEFAULT_TABLE}): a plain identifier. */
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
     * from its start until it returns or fails (default 3 s); keep it at most half the renew
     * deadline. It bounds every round trip of the call through the socket read timeout; the JDBC
     * query timeout of its statements is a whole second or more past it.
     */
    public Builder callTimeout(Duration callTimeout) {
      requireNonNull(callTimeout, "callTimeout");
      if (callTimeout.isNegative() || callTimeout.isZero()) {
        throw new ConfigurationException("callTimeout must be positive, but was " + callTimeout);
      }
      this.callTimeout = callTimeout;
      return this;
    }

    /** For the provider: a pool it built for this store, closed with the store. */
    Builder closing(AutoCloseable pool) {
      this.ownedPool = requireNonNull(pool, "pool");
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

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    checkName("election", election);
    checkName("candidate", candidate);
    long ttlMillis = effectiveTtlMillis(ttl);
    return call(
        election,
        "acquire",
        (dsl, d) -> {
          if (d.needsRowBeforeUpsert()) {
            table.ensureRow(dsl, election);
          }
          int count = table.upsert(dsl, d, election, candidate, ttlMillis);
          // The upsert locked the row whether it granted or refused, so the row read back is the
          // one it left. MariaDB and MySQL may count a refusal as one row, like an insert; the
          // holder tells them apart, since a refusal leaves somebody else's name in the row.
          LeaseRow row = table.readForUpdate(dsl, d, election).orElseThrow(RowChangedMeanwhile::new);
          if (count > 0 && candidate.equals(row.holder())) {
            notifyChange(dsl, d, election);
            return Acquisition.granted(new Lease(election, candidate, FencingToken.of(row.term()), Duration.ofMillis(ttlMillis), ""));
          }
          if (row.holder() == null) {
            throw new RowChangedMeanwhile();
          }
          return Acquisition.held(record(election, row));
        });
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    long ttlMillis = effectiveTtlMillis(lease.ttl());
    String election = lease.election();
    String candidate = lease.candidate();
    long token = lease.token().value();
    return call(
        election,
        "renew",
        (dsl, d) -> {
          if (table.renew(dsl, d, election, candidate, token, ttlMillis) > 0) {
            return lease.renewed(Duration.ofMillis(ttlMillis), lease.handle());
          }
          // A renewal within the grant's millisecond changes nothing, which MariaDB counts as no
          // row with useAffectedRows=true; only the row can say whether the lease is still ours.
          Optional<LeaseRow> row = table.read(dsl, d, election);
          if (row.isPresent() && row.get().isLive() && candidate.equals(row.get().holder()) && row.get().term() == token) {
            return lease.renewed(Duration.ofMillis(ttlMillis), lease.handle());
          }
          String otherHolder = row.filter(LeaseRow::isLive).map(LeaseRow::holder).orElse(null);
          throw new LeaseLostException(
              election,
              "the lease of " + candidate + " with token " + token + " is gone: "
                  + (otherHolder == null ? "it expired or was released" : "now held by " + otherHolder + " with token " + row.get().term()),
              otherHolder);
        });
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    call(
        lease.election(),
        "release",
        (dsl, d) -> {
          if (table.release(dsl, d, lease.election(), lease.candidate(), lease.token().value()) > 0) {
            notifyChange(dsl, d, lease.election());
          }
          return null;
        });
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    checkName("election", election);
    return call(election, "read", (dsl, d) -> table.read(dsl, d, election).filter(LeaseRow::isLive).map(r -> record(election, r)));
  }

  /**
   * On PostgreSQL, runs {@code changed} when the election is released or granted (on the store's
   * LISTEN thread; it must not block). Empty on the other databases: followers poll there.
   *
   * @throws LeaseStoreException when the database cannot be reached to find out which it is
   */
  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    checkName("election", election);
    requireNonNull(changed, "changed");
    if (!setUp(election, deadline()).canNotify()) {
      return Optional.empty();
    }
    PgListener l;
    synchronized (setupLock) {
      checkOpen();
      if (listener == null) {
        listener = new PgListener(connections, table.channel(), callTimeout);
      }
      l = listener;
    }
    return Optional.of(l.add(election, changed));
  }

  /** Election names are kept in a {@code varchar(255)} primary key: 1 to 255 characters. */
  @Override
  public void checkElectionName(String election) {
    checkName("election", election);
  }

  /** {@code jdbc (PostgreSQL)} once the store has talked to its database, {@code jdbc} before. */
  @Override
  public String describe() {
    Dialect d = dialect;
    return d == null ? "jdbc" : "jdbc (" + d.displayName() + ")";
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
  public <T> T inTerm(String election, String candidate, FencingToken token, Function<DSLContext, T> work) {
    requireNonNull(work, "work");
    return guarded(election, candidate, token, (c, d) -> work.apply(callerDsl(c, d)));
  }

  /**
   * {@link #inTerm(Lease, Function)} on plain JDBC: {@code work} gets the transaction's
   * connection; it must not commit, roll back or close it. An {@link SQLException} from it comes
   * back as jOOQ's {@link DataAccessException}, after the rollback.
   */
  public <T> T inTermWithConnection(Lease lease, ConnectionWork<T> work) {
    requireNonNull(lease, "lease");
    return inTermWithConnection(lease.election(), lease.candidate(), lease.token(), work);
  }

  /** {@link #inTermWithConnection(Lease, ConnectionWork)} for an elector's term. */
  public <T> T inTermWithConnection(String election, String candidate, FencingToken token, ConnectionWork<T> work) {
    requireNonNull(work, "work");
    return guarded(election, candidate, token, (c, d) -> work.run(c));
  }

  @FunctionalInterface
  private interface GuardedWork<T> {
    T run(Connection connection, Dialect dialect) throws SQLException;
  }

  private <T> T guarded(String election, String candidate, FencingToken token, GuardedWork<T> work) {
    checkName("election", election);
    checkName("candidate", candidate);
    requireNonNull(token, "token");
    long deadline = deadline();
    Dialect d = setUp(election, deadline);
    Connection c = acquireConnection(election, "check the lease for a guarded write", deadline);
    Throwable failure = null;
    boolean previousAutoCommit = true;
    try {
      boolean current;
      try {
        previousAutoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        int previousNetworkTimeout = Transactions.limitNetwork(c, deadline);
        Throwable checkFailure = null;
        try {
          current = table.lockIfCurrent(dsl(c, d, deadline), d, election, candidate, token.value());
        } catch (RuntimeException ex) {
          checkFailure = ex;
          throw ex;
        } finally {
          // The caller's own statements are not bound by the store's call timeout.
          Transactions.restoreNetwork(c, previousNetworkTimeout, checkFailure);
        }
      } catch (SQLException | DataAccessException e) {
        throw failure(election, "check the lease for a guarded write", e);
      }
      if (!current) {
        throw new LeaseLostException(
            election,
            "guarded write refused: the lease of " + candidate + " with token " + token
                + " is no longer current (expired, released or taken over); nothing was committed",
            null);
      }
      T result = work.run(c, d);
      c.commit();
      return result;
    } catch (SQLException e) {
      failure = e;
      throw new DataAccessException("guarded write in election '" + election + "' failed: " + e.getMessage(), e);
    } catch (RuntimeException | Error e) {
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

  @FunctionalInterface
  private interface Work<T> {
    T run(DSLContext dsl, Dialect dialect) throws SQLException;
  }

  /** A refusal that shows no holder: the row changed between two statements; try again. */
  private static final class RowChangedMeanwhile extends RuntimeException {
    RowChangedMeanwhile() {
      super("the lease row changed between the upsert and its read-back", null, false, false);
    }
  }

  /**
   * Runs {@code work} in a transaction of its own, again when the database chose it as a deadlock
   * or serialization victim and the call timeout allows, and turns database errors into {@link
   * LeaseStoreException}.
   */
  private <T> T call(String election, String action, Work<T> work) {
    long deadline = deadline();
    Dialect d = setUp(election, deadline);
    while (true) {
      try {
        return transactions.inTransaction(deadline, c -> work.run(dsl(c, d, deadline), d));
      } catch (SQLException | DataAccessException | RowChangedMeanwhile e) {
        boolean again = (e instanceof RowChangedMeanwhile || Failures.isTransactionRollback(e)) && System.nanoTime() - deadline < 0;
        if (!again) {
          throw failure(election, action, e);
        }
      }
    }
  }

  private Connection acquireConnection(String election, String action, long deadline) {
    checkOpen();
    try {
      return transactions.acquire(deadline);
    } catch (DataAccessException e) {
      throw failure(election, "get a connection to " + action, e);
    }
  }

  /** A call's deadline on {@link System#nanoTime()}'s clock. */
  private long deadline() {
    return System.nanoTime() + callTimeout.toNanos();
  }

  /** jOOQ on {@code c}, each statement bound by {@code deadline}. */
  private DSLContext dsl(Connection c, Dialect d, long deadline) {
    return DSL.using(new DefaultConfiguration().set(c).set(d.jooq()).set(settings).set(Transactions.bounding(c, deadline)));
  }

  private void notifyChange(DSLContext dsl, Dialect d, String election) {
    if (d.canNotify()) {
      dsl.fetch("select pg_notify(?, ?)", table.channel(), election);
    }
  }

  /**
   * Finds the database and makes sure the table exists; once, but again after a failure. A call
   * that finds another one doing it waits only until its own deadline.
   */
  private Dialect setUp(String election, long deadline) {
    checkOpen();
    Dialect d = dialect;
    if (d != null && tableReady) {
      return d;
    }
    try {
      if (!preparing.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        throw new LeaseStoreException(
            election, "could not reach the database of " + describe() + " within the call timeout of " + callTimeout.toMillis() + " ms: another call has been setting up table " + table.qualifiedName() + " since");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(election, "interrupted while waiting to set up table " + table.qualifiedName() + " of " + describe(), e);
    }
    try {
      checkOpen();
      if (dialect == null) {
        dialect = transactions.inTransaction(deadline, c -> Dialect.of(c.getMetaData()));
      }
      if (!tableReady) {
        prepareTable(election, dialect, deadline);
        tableReady = true;
      }
      return dialect;
    } catch (SQLException | DataAccessException e) {
      throw failure(election, "reach the database", e);
    } finally {
      preparing.unlock();
    }
  }

  private void prepareTable(String election, Dialect d, long deadline) throws SQLException {
    try {
      transactions.inTransaction(deadline, c -> probe(c, d, deadline));
      return;
    } catch (SQLException | DataAccessException e) {
      if (!Failures.isMissingTable(e)) {
        throw e;
      }
      if (!createTable) {
        throw new LeaseStoreException(
            election,
            "table " + table.qualifiedName() + " does not exist on " + d.displayName() + " and creating it is turned off"
                + " (election.jdbc.create-table=false); create it with the DDL in " + LeaseTable.ddlResourcePath(d)
                + " (in the backend-jdbc jar), or allow the store to create it",
            e);
      }
    }
    String ddl = table.createStatement(d);
    try {
      transactions.inTransaction(deadline, c -> dsl(c, d, deadline).execute(ddl));
      log.info("Created the lease table {} on {}", table.qualifiedName(), d.displayName());
    } catch (SQLException | DataAccessException e) {
      try {
        // Another store may have created it at the same moment; only a table still missing is an error.
        transactions.inTransaction(deadline, c -> probe(c, d, deadline));
      } catch (SQLException | DataAccessException again) {
        throw new LeaseStoreException(
            election,
            "table " + table.qualifiedName() + " does not exist on " + d.displayName() + " and cannot be created ("
                + Failures.describe(e) + "); create it with the DDL in " + LeaseTable.ddlResourcePath(d)
                + " (in the backend-jdbc jar), or grant CREATE",
            e);
      }
    }
  }

  private Void probe(Connection c, Dialect d, long deadline) {
    table.probe(dsl(c, d, deadline));
    return null;
  }

  private LeaseStoreException failure(String election, String action, Exception e) {
    if (e instanceof LeaseStoreException) {
      return (LeaseStoreException) e;
    }
    return new LeaseStoreException(
        election, "could not " + action + " on table " + table.qualifiedName() + " of " + describe() + ": " + Failures.describe(e), e);
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
          what + " must have 1 to " + LeaseTable.MAX_NAME_LENGTH + " characters for the jdbc backend, but had " + value.length());
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

  /**
   * Whole seconds strictly past the call timeout: on a network that drops every packet the socket
   * read timeout must come first, since pgjdbc sends a query-timeout cancel on a new connection,
   * which the partition blocks too, and holds the call until the cancel gives up.
   */
  private static int queryTimeoutSeconds(Duration callTimeout) {
    long seconds = callTimeout.toMillis() / 1000 + 1;
    return (int) Math.min(Integer.MAX_VALUE / 1000 - 1, Math.max(1, seconds));
  }
}
