package dev.baton.jdbc;

import dev.baton.election.ConfigurationException;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.SQLDialect;

/**
 * What differs between the databases the store supports: how SQL reads the database clock, the jOOQ
 * dialect handed to guarded work, and the DDL file. Every time comparison happens in SQL against
 * the database's clock, so candidates never compare their own clocks. The statements themselves are
 * put together once per store from these pieces ({@link LeaseSql}).
 */
enum Dialect {
  // clock_timestamp(), not now(): now() is the start of the transaction, and a guard that waited
  // for a row lock must judge expiry at the moment it got the lock.
  POSTGRESQL(
      "PostgreSQL",
      SQLDialect.POSTGRES,
      "schema-postgresql.sql",
      "clock_timestamp()",
      "(clock_timestamp() + ? * interval '1 millisecond')",
      "cast(floor(extract(epoch from (%s - clock_timestamp())) * 1000) as bigint)",
      "cast(floor(extract(epoch from %s) * 1000) as bigint)"),

  // MariaDB and MySQL keep datetime(3) columns in UTC through utc_timestamp(3): current_timestamp
  // follows each session's time_zone, and sessions with different zones would disagree about
  // expiry. The (3) matters: without it the clock has whole seconds.
  MARIADB(
      "MariaDB",
      SQLDialect.MARIADB,
      "schema-mariadb.sql",
      "utc_timestamp(3)",
      "timestampadd(microsecond, ? * 1000, utc_timestamp(3))",
      "(timestampdiff(microsecond, utc_timestamp(3), %s) div 1000)",
      "(timestampdiff(microsecond, '1970-01-01 00:00:00', %s) div 1000)"),

  MYSQL(
      "MySQL",
      SQLDialect.MYSQL,
      "schema-mysql.sql",
      MARIADB.now,
      MARIADB.nowPlusMillis,
      MARIADB.millisUntil,
      MARIADB.epochMillis),

  H2(
      "H2",
      SQLDialect.H2,
      "schema-h2.sql",
      "current_timestamp(3)",
      "dateadd(millisecond, cast(? as bigint), current_timestamp(3))",
      "datediff(millisecond, current_timestamp(3), %s)",
      "datediff(millisecond, timestamp with time zone '1970-01-01 00:00:00+00', %s)");

  private final String displayName;
  private final SQLDialect jooq;
  private final String ddlFile;
  private final String now;
  private final String nowPlusMillis;
  private final String millisUntil;
  private final String epochMillis;

  Dialect(
      String displayName,
      SQLDialect jooq,
      String ddlFile,
      String now,
      String nowPlusMillis,
      String millisUntil,
      String epochMillis) {
    this.displayName = displayName;
    this.jooq = jooq;
    this.ddlFile = ddlFile;
    this.now = now;
    this.nowPlusMillis = nowPlusMillis;
    this.millisUntil = millisUntil;
    this.epochMillis = epochMillis;
  }

  /** The database's current time, in SQL. */
  String now() {
    return now;
  }

  /** The database's current time plus the milliseconds of one bind parameter. */
  String nowPlusMillis() {
    return nowPlusMillis;
  }

  /** Milliseconds from the database's current time until {@code column}; negative once passed. */
  String millisUntil(String column) {
    return String.format(millisUntil, column);
  }

  /** {@code column} as milliseconds since the epoch, for display only. */
  String epochMillis(String column) {
    return String.format(epochMillis, column);
  }

  /**
   * The term of a new grant after {@code term}: one more, but at least the database clock in
   * microseconds since the epoch. So tokens keep increasing when the row is lost and created again
   * (a table dropped and re-created, a restore, a failover to a replica that missed the last
   * grants), as long as the database clock does not step back: a grant takes a transaction on the
   * row, far longer than a microsecond, so no earlier term can have run ahead of the clock.
   */
  String nextTerm(String term) {
    String micros =
        switch (this) {
          case POSTGRESQL ->
              "cast(floor(extract(epoch from clock_timestamp()) * 1000000) as bigint)";
          case MARIADB, MYSQL ->
              "timestampdiff(microsecond, '1970-01-01 00:00:00', utc_timestamp(6))";
          case H2 ->
              "datediff(microsecond, timestamp with time zone '1970-01-01 00:00:00+00', current_timestamp(6))";
        };
    return "greatest(" + term + " + 1, " + micros + ")";
  }

  /**
   * What a select of the lease table (aliased {@code alias}) ends with to lock the rows it can and
   * leave out those another transaction holds: a batch renewal must not wait for a guarded write on
   * one row, or every lease of the batch runs out behind it. PostgreSQL names the table to lock
   * because the select also reads the renewals' list; MariaDB has SKIP LOCKED since 10.6.
   */
  String lockSkippingLocked(String alias) {
    return this == POSTGRESQL
        ? " for update of " + alias + " skip locked"
        : " for update skip locked";
  }

  /**
   * What follows the lease table's name in a statement that names many rows by key: MariaDB's
   * optimizer scans the whole key for a long list, and a locking scan then locks, and waits for,
   * every row of the table, so one guarded write would hold up every batch renewal.
   */
  String byKey() {
    return this == MARIADB || this == MYSQL ? " force index (primary)" : "";
  }

  /**
   * Whether a renewal alone must lock its row first with a wait of its own ({@code FOR UPDATE WAIT
   * seconds}) to end by the call's deadline. H2's client does nothing on setNetworkTimeout and
   * abort, so without it the wait for a guarded write's lock lasts H2's LOCK_TIMEOUT (10 s by
   * default); the others' drivers end it by the deadline.
   */
  boolean bindsLockWaitInSql() {
    return this == H2;
  }

  String displayName() {
    return displayName;
  }

  SQLDialect jooq() {
    return jooq;
  }

  /** The DDL resource next to this class, such as {@code schema-postgresql.sql}. */
  String ddlFile() {
    return ddlFile;
  }

  /** Only PostgreSQL can push changes to followers (LISTEN/NOTIFY). */
  boolean canNotify() {
    return this == POSTGRESQL;
  }

  /** The database behind a connection; MariaDB also when reached through a MySQL driver. */
  static Dialect of(DatabaseMetaData metaData) throws SQLException {
    String product = metaData.getDatabaseProductName();
    String version = metaData.getDatabaseProductVersion();
    String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
    String v = version == null ? "" : version.toLowerCase(Locale.ROOT);
    if (p.contains("postgres")) {
      return POSTGRESQL;
    }
    if (p.contains("mariadb") || v.contains("mariadb")) {
      int[] majorMinor = mariaDbVersion(v, metaData);
      int major = majorMinor[0];
      int minor = majorMinor[1];
      if (major < 10 || (major == 10 && minor < 6)) {
        // The acquire reads the row it left back through INSERT ... RETURNING (MariaDB 10.5), and a
        // batch renewal leaves out the rows guarded writes hold through SKIP LOCKED (10.6).
        throw new ConfigurationException(
            "the jdbc backend needs MariaDB 10.6 or later, but the database is "
                + product
                + " "
                + version);
      }
      return MARIADB;
    }
    if (p.contains("mysql")) {
      if (metaData.getDatabaseMajorVersion() < 8) {
        // A batch renewal leaves out the rows guarded writes hold through SKIP LOCKED (MySQL 8.0).
        throw new ConfigurationException(
            "the jdbc backend needs MySQL 8.0 or later, but the database is "
                + product
                + " "
                + version);
      }
      return MYSQL;
    }
    if (p.equals("h2")) {
      return H2;
    }
    throw new ConfigurationException(
        "the jdbc backend does not support "
            + product
            + " "
            + version
            + "; it supports PostgreSQL, MariaDB 10.6+, MySQL 8.0+ and H2");
  }

  /**
   * MariaDB's major and minor version, also behind the "5.5.5-" a MySQL driver reports before it.
   */
  private static int[] mariaDbVersion(String version, DatabaseMetaData metaData)
      throws SQLException {
    Matcher m = MARIADB_VERSION.matcher(version);
    if (m.find()) {
      return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))};
    }
    return new int[] {metaData.getDatabaseMajorVersion(), metaData.getDatabaseMinorVersion()};
  }

  private static final Pattern MARIADB_VERSION = Pattern.compile("^(?:5\\.5\\.5-)?(\\d+)\\.(\\d+)");
}
