package dev.baton.jdbc;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.baton.election.DeadlineAlarm;
import dev.baton.election.MonotonicClock;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTimeoutException;
import org.jooq.ConnectionProvider;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connections and transactions of a store, each bounded by the deadline of the call it serves:
 * before every round trip the connection's socket read timeout is set to what is left of the call
 * timeout, so a server that stops answering (a partition drops every packet) fails the call by its
 * deadline instead of after the driver's own timeouts. Every connection is handed back as it was
 * found (auto-commit, network timeout), whether the work committed or failed.
 */
final class Transactions {

  private static final Logger log = LoggerFactory.getLogger(Transactions.class);

  @FunctionalInterface
  interface Task<T> {
    T run(Connection connection) throws SQLException;
  }

  /**
   * The least read timeout for the round trips that tidy up after the deadline (a rollback, the
   * auto-commit reset): long enough for a healthy server, short enough not to matter through a
   * partition, where the connection is usually broken already and they fail at once.
   */
  private static final int CLEANUP_MILLIS = 100;

  private final ConnectionProvider connections;
  private final MonotonicClock clock;

  Transactions(ConnectionProvider connections, MonotonicClock clock) {
    this.connections = connections;
    this.clock = clock;
  }

  /**
   * Runs {@code task} in a transaction of its own, committed when it returns and rolled back when
   * it throws, failing with an {@link SQLTimeoutException} once {@code deadlineNanos} ({@link
   * System#nanoTime()}) has passed.
   */
  <T> T inTransaction(long deadlineNanos, Task<T> task) throws SQLException {
    Connection c = acquire(deadlineNanos);
    DeadlineAlarm alarm = abortAfter(c, deadlineNanos);
    Throwable failure = null;
    boolean previousAutoCommit = true;
    int previousNetworkTimeout = -1;
    try {
      previousNetworkTimeout = limitNetwork(c, deadlineNanos, clock);
      previousAutoCommit = c.getAutoCommit();
      if (previousAutoCommit) {
        c.setAutoCommit(false);
      }
      T result = task.run(c);
      limitNetwork(c, deadlineNanos, clock);
      c.commit();
      return result;
    } catch (Throwable t) {
      failure = t;
      if (alarm.wentOff()) {
        failure = aborted(t);
        rollback(c, deadlineNanos, failure);
        throw (SQLTimeoutException) failure;
      }
      rollback(c, deadlineNanos, t);
      throw t;
    } finally {
      Throwable cleanup = failure != null ? failure : abortedAfterItsAnswer(alarm);
      restoreAutoCommit(c, previousAutoCommit, deadlineNanos, cleanup);
      restoreNetwork(c, previousNetworkTimeout, cleanup);
      alarm.disarm();
      release(c, cleanup);
      logIfAbortedAfterItsAnswer(cleanup, failure);
    }
  }

  /**
   * On a busy machine the alarm can go off between a call's last answer (a read's rows, a commit)
   * and its end. The answer stands; only the connection is lost: the restores that follow fail on
   * it, which makes the pool drop it, and they must not turn the answer into a failure. Returns
   * what collects those failures, or null when the alarm was disarmed in time.
   */
  private static Throwable abortedAfterItsAnswer(DeadlineAlarm alarm) {
    return alarm.disarm()
        ? null
        : new SQLTimeoutException(
            "the call timeout passed after the database had answered; the connection was aborted"
                + " and is dropped, the answer stands");
  }

  private static void logIfAbortedAfterItsAnswer(Throwable cleanup, Throwable failure) {
    if (cleanup != null && cleanup != failure) {
      log.debug("a lease store call answered just before its deadline", cleanup);
    }
  }

  /**
   * Runs {@code task} on a connection in auto-commit mode, so that each statement commits on its
   * own, in the same round trip, and fails with an {@link SQLTimeoutException} once {@code
   * deadlineNanos} has passed. For calls that are one statement, or whose statements need not see
   * each other under one lock.
   */
  <T> T autoCommitted(long deadlineNanos, Task<T> task) throws SQLException {
    Connection c = acquire(deadlineNanos);
    DeadlineAlarm alarm = abortAfter(c, deadlineNanos);
    Throwable failure = null;
    boolean previousAutoCommit = true;
    int previousNetworkTimeout = -1;
    try {
      previousNetworkTimeout = limitNetwork(c, deadlineNanos, clock);
      previousAutoCommit = c.getAutoCommit();
      if (!previousAutoCommit) {
        c.setAutoCommit(true);
      }
      return task.run(c);
    } catch (Throwable t) {
      failure = t;
      if (alarm.wentOff()) {
        failure = aborted(t);
        throw (SQLTimeoutException) failure;
      }
      throw t;
    } finally {
      Throwable cleanup = failure != null ? failure : abortedAfterItsAnswer(alarm);
      if (!previousAutoCommit) {
        restoreManualCommit(c, cleanup);
      }
      restoreNetwork(c, previousNetworkTimeout, cleanup);
      alarm.disarm();
      release(c, cleanup);
      logIfAbortedAfterItsAnswer(cleanup, failure);
    }
  }

  private static void restoreManualCommit(Connection c, Throwable failure) {
    try {
      if (!c.isClosed()) {
        c.setAutoCommit(false);
      }
    } catch (SQLException e) {
      if (failure == null) {
        throw new DataAccessException(
            "cannot restore manual commit on a lease store connection", e);
      }
      failure.addSuppressed(e);
    }
  }

  /**
   * Aborts {@code c} if its call is still going a little after {@code deadlineNanos}: the socket
   * read timeout ends every wait for an answer by the deadline, but nothing ends a write into
   * buffers that a silent link stopped draining (a large batch renewal can fill them). Aborting
   * closes the socket, which fails the blocked write; the pool then drops the connection.
   */
  private DeadlineAlarm abortAfter(Connection c, long deadlineNanos) {
    return DeadlineAlarm.arm(
        clock,
        deadlineNanos + MILLISECONDS.toNanos(CLEANUP_MILLIS),
        () -> {
          try {
            c.abort(Runnable::run);
          } catch (SQLException | RuntimeException e) {
            log.debug("aborting a lease store connection past its call's deadline failed", e);
          }
        });
  }

  /** The failure of a call whose connection was aborted at its deadline says so. */
  private static SQLTimeoutException aborted(Throwable t) {
    return new SQLTimeoutException(
        "the call timeout passed while the database was not taking what was sent (a link that stopped acknowledging); the connection was aborted",
        t);
  }

  /**
   * A connection from the provider, which the pool's own connection timeout bounds. One that came
   * too late for the deadline goes back at once: the call fails rather than overrun.
   *
   * @throws DataAccessException when the pool has none, or none in time
   */
  Connection acquire(long deadlineNanos) {
    long start = clock.nanoTime();
    Connection c = connections.acquire();
    if (deadlineNanos - clock.nanoTime() <= 0) {
      SQLTimeoutException late =
          new SQLTimeoutException(
              "the call timeout passed while waiting "
                  + NANOSECONDS.toMillis(clock.nanoTime() - start)
                  + " ms for a connection from the pool");
      release(c, late);
      throw new DataAccessException(late.getMessage(), late);
    }
    return c;
  }

  void release(Connection c, Throwable failure) {
    try {
      connections.release(c);
    } catch (RuntimeException e) {
      if (failure == null) {
        throw e;
      }
      failure.addSuppressed(e);
    }
  }

  /** Rolls back within a short read timeout once {@code deadlineNanos} has passed. */
  private void rollback(Connection c, long deadlineNanos, Throwable failure) {
    try {
      if (!c.isClosed()) {
        limitNetwork(c, deadlineNanos, CLEANUP_MILLIS, clock);
      }
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
    rollback(c, failure);
  }

  /** Rolls back under the connection's own network timeout. */
  static void rollback(Connection c, Throwable failure) {
    try {
      if (!c.isClosed()) {
        c.rollback();
      }
    } catch (SQLException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /** Restores auto-commit within a short read timeout once {@code deadlineNanos} has passed. */
  private void restoreAutoCommit(
      Connection c, boolean previous, long deadlineNanos, Throwable failure) {
    try {
      if (previous && !c.isClosed()) {
        limitNetwork(c, deadlineNanos, CLEANUP_MILLIS, clock);
      }
    } catch (SQLException e) {
      if (failure == null) {
        throw new DataAccessException(
            "cannot limit the network timeout of a lease store connection", e);
      }
      failure.addSuppressed(e);
    }
    restoreAutoCommit(c, previous, failure);
  }

  /** Restores auto-commit under the connection's own network timeout. */
  static void restoreAutoCommit(Connection c, boolean previous, Throwable failure) {
    try {
      if (previous && !c.isClosed()) {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      if (failure == null) {
        throw new DataAccessException("cannot restore auto-commit on a lease store connection", e);
      }
      failure.addSuppressed(e);
    }
  }

  /**
   * Sets the socket read timeout to what is left until {@code deadlineNanos} on {@code clock}.
   *
   * @return the previous network timeout, or -1 when the driver has none (H2 over TCP reads its
   *     timeout from the URL's NETWORK_TIMEOUT instead)
   * @throws SQLTimeoutException when the deadline has passed
   */
  static int limitNetwork(Connection c, long deadlineNanos, MonotonicClock clock)
      throws SQLException {
    return limitNetwork(c, deadlineNanos, 0, clock);
  }

  private static int limitNetwork(
      Connection c, long deadlineNanos, int leastMillis, MonotonicClock clock) throws SQLException {
    long left = deadlineNanos - clock.nanoTime();
    if (left <= 0 && leastMillis == 0) {
      throw new SQLTimeoutException("the call timeout passed before the database answered");
    }
    int millis =
        (int)
            Math.max(
                leastMillis,
                Math.min(Integer.MAX_VALUE, NANOSECONDS.toMillis(Math.max(0, left)) + 1));
    int previous;
    try {
      previous = c.getNetworkTimeout();
    } catch (SQLFeatureNotSupportedException e) {
      return -1;
    }
    c.setNetworkTimeout(Runnable::run, millis);
    return previous;
  }

  static void restoreNetwork(Connection c, int previous, Throwable failure) {
    try {
      if (previous >= 0 && !c.isClosed()) {
        c.setNetworkTimeout(Runnable::run, previous);
      }
    } catch (SQLException e) {
      if (failure == null) {
        throw new DataAccessException(
            "cannot restore the network timeout of a lease store connection", e);
      }
      failure.addSuppressed(e);
    }
  }
}
