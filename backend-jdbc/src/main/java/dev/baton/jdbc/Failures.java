package dev.baton.jdbc;

import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.Set;
import org.jooq.exception.DataAccessException;

/** Reads database errors: which ones are worth another try, and what to say about them. */
final class Failures {

  private Failures() {}

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
        if (state.equals("42P01") || state.equals("42S02") || state.equals("3F000")
            || (h2 && e.getErrorCode() >= 42102 && e.getErrorCode() <= 42104)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The database's own words, without the SQL text jOOQ puts in front: the distinct messages of
   * the cause chain, outermost first, and the SQLState.
   */
  static String describe(Throwable t) {
    Set<String> messages = new LinkedHashSet<>();
    for (Throwable c = t; c != null && messages.size() < 3; c = c.getCause()) {
      boolean jooqWrapper = c instanceof DataAccessException && c.getCause() != null;
      if (!jooqWrapper && c.getMessage() != null && !c.getMessage().isBlank()) {
        messages.add(c.getMessage().strip());
      }
    }
    String state = sqlState(t);
    String text = messages.isEmpty() ? t.getClass().getName() : String.join(": ", messages);
    return state == null ? text : text + " (SQLState " + state + ")";
  }
}
