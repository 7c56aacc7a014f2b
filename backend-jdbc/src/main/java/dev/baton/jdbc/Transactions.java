package dev.baton.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import org.jooq.ConnectionProvider;
import org.jooq.exception.DataAccessException;

/**
 * Connections and transactions of a store: every connection is handed back as it was found
 * (auto-commit, network timeout), whether the work committed or failed.
 */
final class Transactions {

  @FunctionalInterface
  interface Task<T> {
    T run(Connection connection) throws SQLException;
  }

  private final ConnectionProvider connections;
  private final int networkTimeoutMillis;

  /**
   * @param networkTimeoutMillis the socket read timeout while the store's own statements run:
   *     longer than their query timeout, so that the query timeout cancels a slow statement and
   *     this one only cuts a connection whose server no longer answers at all
   */
  Transactions(ConnectionProvider connections, int networkTimeoutMillis) {
    this.connections = connections;
    this.networkTimeoutMillis = networkTimeoutMillis;
  }

  /** Runs {@code task} in a transaction of its own: committed when it returns, rolled back when it throws. */
  <T> T inTransaction(Task<T> task) throws SQLException {
    Connection c = acquire();
    Throwable failure = null;
    boolean previousAutoCommit = true;
    int previousNetworkTimeout = -1;
    try {
      previousNetworkTimeout = limitNetwork(c);
      previousAutoCommit = c.getAutoCommit();
      if (previousAutoCommit) {
        c.setAutoCommit(false);
      }
      T result = task.run(c);
      c.commit();
      return result;
    } catch (Throwable t) {
      failure = t;
      rollback(c, t);
      throw t;
    } finally {
      restoreAutoCommit(c, previousAutoCommit, failure);
      restoreNetwork(c, previousNetworkTimeout, failure);
      release(c, failure);
    }
  }

  /** A connection from the provider; a failure comes as jOOQ's DataAccessException. */
  Connection acquire() {
    return connections.acquire();
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

  static void rollback(Connection c, Throwable failure) {
    try {
      c.rollback();
    } catch (SQLException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

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

  /** @return the previous network timeout, or -1 when the driver has none */
  int limitNetwork(Connection c) throws SQLException {
    int previous;
    try {
      previous = c.getNetworkTimeout();
    } catch (SQLFeatureNotSupportedException e) {
      return -1;
    }
    c.setNetworkTimeout(Runnable::run, networkTimeoutMillis);
    return previous;
  }

  static void restoreNetwork(Connection c, int previous, Throwable failure) {
    try {
      if (previous >= 0 && !c.isClosed()) {
        c.setNetworkTimeout(Runnable::run, previous);
      }
    } catch (SQLException e) {
      if (failure == null) {
        throw new DataAccessException("cannot restore the network timeout of a lease store connection", e);
      }
      failure.addSuppressed(e);
    }
  }
}
