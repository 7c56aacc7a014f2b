package dev.baton.jdbc;

import static org.jooq.impl.DSL.field;

import dev.baton.election.ConfigurationException;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.Locale;
import org.jooq.Field;
import org.jooq.SQLDialect;

/**
 * What differs between the databases the store supports: the jOOQ dialect, the database clock
 * in SQL, and the DDL file. Every time comparison happens in SQL against the database's clock, so
 * candidates never compare their own clocks.
 */
enum Dialect {
  POSTGRESQL("PostgreSQL", SQLDialect.POSTGRES, "schema-postgresql.sql") {
    // clock_timestamp(), not now(): now() is the start of the transaction, and a guard that waited
    // for a row lock must judge expiry at the moment it got the lock.
    @Override
    Field<OffsetDateTime> now() {
      return field("clock_timestamp()", OffsetDateTime.class);
    }

    @Override
    Field<OffsetDateTime> nowPlusMillis(Field<Long> millis) {
      return field("(clock_timestamp() + {0} * interval '1 millisecond')", OffsetDateTime.class, millis);
    }

    @Override
    Field<Long> millisUntil(Field<OffsetDateTime> time) {
      return field("cast(floor(extract(epoch from ({0} - clock_timestamp())) * 1000) as bigint)", Long.class, time);
    }

    @Override
    Field<Long> epochMillis(Field<OffsetDateTime> time) {
      return field("cast(floor(extract(epoch from {0}) * 1000) as bigint)", Long.class, time);
    }
  },

  // MariaDB and MySQL keep datetime(3) columns in UTC through utc_timestamp(3): current_timestamp
  // follows each session's time_zone, and sessions with different zones would disagree about
  // expiry. The (3) matters: without it the clock has whole seconds.
  MARIADB("MariaDB", SQLDialect.MARIADB, "schema-mariadb.sql") {
    @Override
    Field<OffsetDateTime> now() {
      return field("utc_timestamp(3)", OffsetDateTime.class);
    }

    @Override
    Field<OffsetDateTime> nowPlusMillis(Field<Long> millis) {
      return field("timestampadd(microsecond, {0} * 1000, utc_timestamp(3))", OffsetDateTime.class, millis);
    }

    @Override
    Field<Long> millisUntil(Field<OffsetDateTime> time) {
      return field("(timestampdiff(microsecond, utc_timestamp(3), {0}) div 1000)", Long.class, time);
    }

    @Override
    Field<Long> epochMillis(Field<OffsetDateTime> time) {
      return field("(timestampdiff(microsecond, '1970-01-01 00:00:00', {0}) div 1000)", Long.class, time);
    }
  },

  MYSQL("MySQL", SQLDialect.MYSQL, "schema-mysql.sql") {
    @Override
    Field<OffsetDateTime> now() {
      return MARIADB.now();
    }

    @Override
    Field<OffsetDateTime> nowPlusMillis(Field<Long> millis) {
      return MARIADB.nowPlusMillis(millis);
    }

    @Override
    Field<Long> millisUntil(Field<OffsetDateTime> time) {
      return MARIADB.millisUntil(time);
    }

    @Override
    Field<Long> epochMillis(Field<OffsetDateTime> time) {
      return MARIADB.epochMillis(time);
    }
  },

  H2("H2", SQLDialect.H2, "schema-h2.sql") {
    @Override
    Field<OffsetDateTime> now() {
      return field("current_timestamp(3)", OffsetDateTime.class);
    }

    @Override
    Field<OffsetDateTime> nowPlusMillis(Field<Long> millis) {
      return field("dateadd(millisecond, {0}, current_timestamp(3))", OffsetDateTime.class, millis);
    }

    @Override
    Field<Long> millisUntil(Field<OffsetDateTime> time) {
      return field("datediff(millisecond, current_timestamp(3), {0})", Long.class, time);
    }

    @Override
    Field<Long> epochMillis(Field<OffsetDateTime> time) {
      return field("datediff(millisecond, timestamp with time zone '1970-01-01 00:00:00+00', {0})", Long.class, time);
    }
  };

  private final String displayName;
  private final SQLDialect jooq;
  private final String ddlFile;

  Dialect(String displayName, SQLDialect jooq, String ddlFile) {
    this.displayName = displayName;
    this.jooq = jooq;
    this.ddlFile = ddlFile;
  }

  /** The database's current time. */
  abstract Field<OffsetDateTime> now();

  /** The database's current time plus {@code millis}. */
  abstract Field<OffsetDateTime> nowPlusMillis(Field<Long> millis);

  /** Milliseconds from the database's current time until {@code time}; negative once passed. */
  abstract Field<Long> millisUntil(Field<OffsetDateTime> time);

  /** {@code time} as milliseconds since the epoch, for display only. */
  abstract Field<Long> epochMillis(Field<OffsetDateTime> time);

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

  /** Only PostgreSQL can push a release to followers (LISTEN/NOTIFY). */
  boolean canNotify() {
    return this == POSTGRESQL;
  }

  /**
   * H2's MERGE ... USING lets two concurrent first inserts of one key collide with a duplicate-key
   * error, so on H2 the row is created first by a MERGE ... KEY, which H2 retries internally on
   * such a collision; the conditional upsert then always meets an existing, locked row.
   */
  boolean needsRowBeforeUpsert() {
    return this == H2;
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
      return MARIADB;
    }
    if (p.contains("mysql")) {
      return MYSQL;
    }
    if (p.equals("h2")) {
      return H2;
    }
    throw new ConfigurationException(
        "the jdbc backend does not support " + product + " " + version + "; it supports PostgreSQL, MariaDB, MySQL and H2");
  }
}
