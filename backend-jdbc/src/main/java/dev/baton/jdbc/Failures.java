package dev.baton.jdbc;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.LinkedHashSet;
import java.util.Set;
import org.jooq.exception.DataAccessException;

/** Reads database errors: which ones are worth another try, and what to say about them. */
final class Failures {

  private Failures() {}

  /**
   * What went wrong, in the words an operator needs first: each asks for a different fix (start or
   * reach the server, fix the login, grant, create the table), and the driver's own message often
   * does not say which (a refused role used to read as "could not reach the database").
   */
  enum Kind {
    UNREACHABLE("cannot reach the database"),
    NO_CONNECTION(
        "no connection from the pool within the call timeout (the database is unreachable or slow to accept, or every connection is busy)"),
    CREDENTIALS("the database refused the login (user name or password)"),
    PERMISSION(
        "the database user lacks a privilege the store needs (SELECT, INSERT, UPDATE on the table; CREATE to create it)"),
    MISSING_TABLE("the lease table does not exist"),
    TIMEOUT("the database did not answer within the call timeout"),
    OTHER("the database refused the call");

    final String phrase;

    Kind(String phrase) {
      this.phrase = phrase;
    }
  }

  /**
   * Reads the SQLState classes (08 connection, 28 authorisation, 42501 privilege) and the vendor
   * codes where the state is too coarse: MariaDB/MySQL report a refused login as 1045 (28000), a
   * refused database as 1044, a refused table or column as 1142/1143 (all 42000); H2 reports a lost
   * session as 90067 and missing rights as 90096.
   */
  static Kind kind(Throwable t) {
    if (isMissingTable(t)) {
      return Kind.MISSING_TABLE;
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException) {
        SQLException e = (SQLException) c;
        String state = String.valueOf(e.getSQLState());
        int code = e.getErrorCode();
        boolean h2 = e.getClass().getName().startsWith("org.h2.");
        // MariaDB's driver throws the java.sql classes: its vendor codes are known by their state.
        boolean mariaDbDenied =
            state.equals("42000") && (code == 1044 || code == 1142 || code == 1143);
        if (state.startsWith("28") || code == 1045) {
          return Kind.CREDENTIALS;
        }
        if (state.equals("42501") || mariaDbDenied || (h2 && code == 90096)) {
          return Kind.PERMISSION;
        }
        if (state.startsWith("08") || (h2 && (code == 90067 || code == 90098))) {
          return Kind.UNREACHABLE;
        }
        if (c instanceof SQLTimeoutException || state.equals("57014") || state.equals("HYT00")) {
          return Kind.TIMEOUT;
        }
        if (c instanceof SQLTransientConnectionException && c.getCause() == null) {
          // The pool's own timeout, before any attempt to connect had failed (H2 retries a refused
          // connect for a while): the database may be down, or the pool used up.
          return Kind.NO_CONNECTION;
        }
      }
      if (c instanceof ConnectException
          || c instanceof UnknownHostException
          || c instanceof NoRouteToHostException) {
        return Kind.UNREACHABLE;
      }
    }
    return Kind.OTHER;
  }

  /** The first SQLState in the cause chain, or null. */
  static String sqlState(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException && ((SQLException) c).getSQLState() != null) {
        return ((SQLException) c).getSQLState();
      }
    }
    return null;
  }

  /**
   * A deadlock or serialization victim (SQLState class 40), or H2's concurrent update: the
   * transaction was rolled back and the same statements may simply run again.
   */
  static boolean isTransactionRollback(Throwable t) {
    String state = sqlState(t);
    return state != null && (state.startsWith("40") || state.equals("90131"));
  }

  /**
   * The table (or its schema) does not exist: PostgreSQL 42P01, MariaDB/MySQL 42S02, H2's error
   * codes 42102 to 42104 (42104 when the database has no tables at all).
   */
  static boolean isMissingTable(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException) {
        SQLException e = (SQLException) c;
        String state = String.valueOf(e.getSQLState());
        boolean h2 = e.getClass().getName().startsWith("org.h2.");
        if (state.equals("42P01")
            || state.equals("42S02")
            || state.equals("3F000")
            || (h2 && e.getErrorCode() >= 42102 && e.getErrorCode() <= 42104)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The database's own words, without the SQL text jOOQ puts in front or the pool's "timed out" in
   * front of the failure it timed out on: the distinct messages of the cause chain, outermost
   * first, and the SQLState.
   */
  static String describe(Throwable t) {
    Set<String> messages = new LinkedHashSet<>();
    for (Throwable c = t; c != null && messages.size() < 3; c = c.getCause()) {
      // jOOQ's wrapper repeats the SQL; the pool's timeout only says it waited, and its cause says
      // why.
      boolean wrapper =
          (c instanceof DataAccessException || c instanceof SQLTransientConnectionException)
              && c.getCause() != null;
      if (!wrapper && c.getMessage() != null && !c.getMessage().isBlank()) {
        messages.add(c.getMessage().strip());
      }
    }
    String state = sqlState(t);
    String text = messages.isEmpty() ? t.getClass().getName() : String.join(": ", messages);
    return state == null ? text : text + " (SQLState " + state + ")";
  }
}
