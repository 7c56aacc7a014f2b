package dev.baton.jdbc;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a {@link JdbcLeaseStore} reaches its database for a call: it finds out which database it is
 * from the first connection (and puts the statements together then), bounds each call by the call
 * timeout, runs it again after a deadlock or a missing table it created, and turns database errors
 * into {@link LeaseStoreException}.
 */
final class StoreCalls {

  private static final Logger log = LoggerFactory.getLogger(StoreCalls.class);

  @FunctionalInterface
  interface Work<T> {
    T run(LeaseStatements statements, long deadline) throws SQLException;
  }

  /** A refusal that shows no live holder: the lease ran out between two statements; try again. */
  static final class RowChangedMeanwhile extends RuntimeException {
    RowChangedMeanwhile() {
      super("the lease row changed between the acquire and its read-back", null, false, false);
    }
  }

  private final Transactions transactions;
  private final LeaseTable table;
  private final boolean createTable;
  private final Duration callTimeout;
  private final int queryTimeoutSeconds;
  private final Runnable checkOpen;
  private final MonotonicClock clock;

  /** The statements for the store's database, once a connection has shown which it is. */
  private volatile LeaseStatements statements;

  private volatile boolean checkedH2WriteDelay;

  private final AtomicInteger callsInFlight = new AtomicInteger();
  private final Object answeredLock = new Object();

  /** Whether any call has come back yet, either way. */
  private volatile boolean answered; // written under answeredLock

  StoreCalls(
      Transactions transactions,
      LeaseTable table,
      boolean createTable,
      Duration callTimeout,
      MonotonicClock clock,
      Runnable checkOpen) {
    this.clock = clock;
    this.transactions = transactions;
    this.table = table;
    this.createTable = createTable;
    this.callTimeout = callTimeout;
    this.queryTimeoutSeconds = queryTimeoutSeconds(callTimeout);
    this.checkOpen = checkOpen;
  }

  /**
   * Runs {@code work}, again when the database chose it as a deadlock or serialization victim and
   * the call timeout allows, and once more after creating a missing table; turns database errors
   * into {@link LeaseStoreException}. The table is not checked before: the first call finds out.
   */
  <T> T call(String election, String action, Work<T> work) {
    callsInFlight.incrementAndGet();
    try {
      return callOnce(election, action, work);
    } finally {
      callsInFlight.decrementAndGet();
      if (!answered) {
        synchronized (answeredLock) {
          answered = true;
          answeredLock.notifyAll();
        }
      }
    }
  }

  private <T> T callOnce(String election, String action, Work<T> work) {
    long deadline = deadline();
    LeaseStatements s = statements(election, deadline);
    boolean tableCreated = false;
    Exception createFailure = null;
    while (true) {
      try {
        return work.run(s, deadline);
      } catch (SQLException | DataAccessException | RowChangedMeanwhile e) {
        if (Failures.isMissingTable(e)) {
          if (!tableCreated) {
            tableCreated = true;
            createFailure = createTable(election, s, deadline, e);
            continue;
          }
          if (createFailure != null) {
            throw new LeaseStoreException(
                election,
                "table "
                    + table.qualifiedName()
                    + " does not exist on "
                    + s.dialect().displayName()
                    + " and cannot be created ("
                    + Failures.describe(createFailure)
                    + "); create it with the DDL in "
                    + LeaseTable.ddlResourcePath(s.dialect())
                    + " (in the backend-jdbc jar), or grant CREATE",
                createFailure);
          }
        }
        boolean again =
            (e instanceof RowChangedMeanwhile || Failures.isTransactionRollback(e))
                && clock.nanoTime() - deadline < 0;
        if (!again) {
          throw failure(election, action, e);
        }
      }
    }
  }

  /** Waits, at most until {@code deadline}, while the store's first calls are under way. */
  void awaitFirstAnswer(long deadline) {
    synchronized (answeredLock) {
      while (!answered && callsInFlight.get() > 0) {
        long left = deadline - clock.nanoTime();
        if (left <= 0) {
          return;
        }
        try {
          answeredLock.wait(Math.max(1, NANOSECONDS.toMillis(left)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /**
   * Runs {@code task} in a transaction of its own, or with each statement committing on its own.
   */
  <T> T inConnection(boolean transaction, long deadline, Transactions.Task<T> task)
      throws SQLException {
    return transaction
        ? transactions.inTransaction(deadline, task)
        : transactions.autoCommitted(deadline, task);
  }

  /**
   * Creates the missing table, unless that is turned off.
   *
   * @return why creating it failed, or null when the DDL ran (or another store created it first)
   */
  private Exception createTable(
      String election, LeaseStatements s, long deadline, Exception missing) {
    Dialect d = s.dialect();
    if (!createTable) {
      throw new LeaseStoreException(
          election,
          "table "
              + table.qualifiedName()
              + " does not exist on "
              + d.displayName()
              + " and creating it is turned off"
              + " (election.jdbc.create-table=false); create it with the DDL in "
              + LeaseTable.ddlResourcePath(d)
              + " (in the backend-jdbc jar), or allow the store to create it",
          missing);
    }
    String ddl = table.createStatement(d);
    try {
      transactions.autoCommitted(
          deadline,
          c -> {
            s.execute(c, ddl, deadline);
            return null;
          });
      log.info("Created the lease table {} on {}", table.qualifiedName(), d.displayName());
      return null;
    } catch (SQLException | DataAccessException e) {
      // Another store may have created it at the same moment; the call's retry tells.
      return e;
    }
  }

  /** A connection for work that manages its own transaction (a guarded write). */
  Connection acquireConnection(String election, String action, long deadline) {
    checkOpen.run();
    try {
      return transactions.acquire(deadline);
    } catch (DataAccessException e) {
      throw failure(election, "get a connection to " + action, e);
    }
  }

  /** A call's deadline on the store's clock. */
  long deadline() {
    return clock.nanoTime() + callTimeout.toNanos();
  }

  /**
   * The statements for the store's database, found from the first connection's metadata (no round
   * trip) and kept; again after a failure to reach the database.
   */
  LeaseStatements statements(String election, long deadline) {
    checkOpen.run();
    LeaseStatements s = statements;
    if (s != null) {
      return s;
    }
    try {
      Dialect d =
          transactions.autoCommitted(
              deadline,
              c -> {
                Dialect found = Dialect.of(c.getMetaData());
                if (found == Dialect.H2 && !checkedH2WriteDelay) {
                  warnIfH2CommitsAreLate(c);
                  checkedH2WriteDelay = true;
                }
                return found;
              });
      s = new LeaseStatements(table, d, queryTimeoutSeconds, clock);
      statements = s;
      return s;
    } catch (SQLException | DataAccessException e) {
      throw failure(election, "connect to learn which database it is", e);
    }
  }

  /**
   * H2 writes a commit to its file in the background, up to WRITE_DELAY (500 ms) later. A grant
   * confirmed in that window dies with the process that hosts the database, and the next leader can
   * be handed the same fencing token again. In-memory databases have no file and nothing to lose
   * that the process does not lose with them. A persisted SET WRITE_DELAY 0 is not honoured when
   * the file is opened again; only the URL that opens the database decides, which is why the check
   * reads every row H2 reports.
   */
  private void warnIfH2CommitsAreLate(Connection c) {
    try (var st = c.createStatement();
        var rs =
            st.executeQuery(
                "SELECT DATABASE_PATH(), (SELECT MAX(CAST(SETTING_VALUE AS INT)) FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'WRITE_DELAY')")) {
      if (rs.next() && rs.getString(1) != null && rs.getInt(2) > 0) {
        log.warn(
            "The H2 database {} writes commits to its file up to {} ms late (WRITE_DELAY): if the process hosting it dies, a confirmed grant"
                + " can be lost and a fencing token handed out twice. Open it with ;WRITE_DELAY=0 in the URL (H2 takes it from the URL that opens the database,"
                + " and only from an admin user).",
            rs.getString(1),
            rs.getInt(2));
      }
    } catch (SQLException e) {
      // A check that cannot be made must not keep the store from working; it only loses the
      // warning.
      log.debug("Could not read H2's WRITE_DELAY setting", e);
    }
  }

  /** The database, once a call has met it. */
  Dialect dialectIfKnown() {
    LeaseStatements s = statements;
    return s == null ? null : s.dialect();
  }

  /** {@code jdbc (PostgreSQL)} once a call has met the database, {@code jdbc} before. */
  String describe() {
    Dialect d = dialectIfKnown();
    return d == null ? "jdbc" : "jdbc (" + d.displayName() + ")";
  }

  LeaseStoreException failure(String election, String action, Exception e) {
    if (e instanceof LeaseStoreException) {
      return (LeaseStoreException) e;
    }
    Failures.Kind kind = Failures.kind(e);
    String what = kind == Failures.Kind.OTHER ? "" : kind.phrase + ": ";
    return new LeaseStoreException(
        election,
        what
            + "could not "
            + action
            + " (table "
            + table.qualifiedName()
            + " on "
            + describe()
            + "): "
            + Failures.describe(e),
        e);
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
