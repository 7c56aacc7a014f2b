package dev.baton.jdbc;

import static org.jooq.impl.DSL.falseCondition;
import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.table;
import static org.jooq.impl.DSL.unquotedName;
import static org.jooq.impl.DSL.val;

import dev.baton.election.ConfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Name;
import org.jooq.Record5;
import org.jooq.Table;

/**
 * The lease table and the statements on it. One row per election; the row is never deleted, so
 * its {@code term} keeps counting up across releases and every grant gets a higher token.
 */
final class LeaseTable {

  static final String DEFAULT_NAME = "baton_lease";

  /** Names are interpolated into DDL and LISTEN, so only plain identifiers are accepted. */
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private static final Pattern DEFAULT_NAME_IN_DDL = Pattern.compile("\\b" + DEFAULT_NAME + "\\b");

  /** Election names and candidate ids are stored in varchar(255) columns. */
  static final int MAX_NAME_LENGTH = 255;

  private final String qualifiedName;
  private final Table<?> table;
  private final Field<String> election;
  private final Field<String> holder;
  private final Field<Long> term;
  private final Field<Long> ttlMillis;
  private final Field<OffsetDateTime> acquiredAt;
  private final Field<OffsetDateTime> renewedAt;
  private final Field<OffsetDateTime> expiresAt;

  /** A row as the store reads it; times are the database's, computed in SQL. */
  record LeaseRow(String holder, long term, long ttlMillis, long renewedAtEpochMillis, long expiresInMillis) {

    boolean isLive() {
      return holder != null && expiresInMillis > 0;
    }
  }

  LeaseTable(Optional<String> schema, String name) {
    checkIdentifier("table", name);
    schema.ifPresent(s -> checkIdentifier("schema", s));
    Name tableName = schema.map(s -> unquotedName(s, name)).orElse(unquotedName(name));
    this.qualifiedName = schema.map(s -> s + "." + name).orElse(name);
    this.table = table(tableName);
    this.election = column(tableName, "election", String.class);
    this.holder = column(tableName, "holder", String.class);
    this.term = column(tableName, "term", Long.class);
    this.ttlMillis = column(tableName, "ttl_millis", Long.class);
    this.acquiredAt = column(tableName, "acquired_at", OffsetDateTime.class);
    this.renewedAt = column(tableName, "renewed_at", OffsetDateTime.class);
    this.expiresAt = column(tableName, "expires_at", OffsetDateTime.class);
  }

  private static <T> Field<T> column(Name table, String column, Class<T> type) {
    return field(table.append(unquotedName(column)), type);
  }

  static String checkIdentifier(String what, String value) {
    if (!IDENTIFIER.matcher(value).matches()) {
      throw new ConfigurationException(
          what + ": '" + value + "' is not a plain SQL identifier; use letters, digits and underscores,"
              + " starting with a letter or underscore, at most 63 characters");
    }
    return value;
  }

  /** {@code schema.table} or {@code table}, as it appears in SQL and messages. */
  String qualifiedName() {
    return qualifiedName;
  }

  /** The CREATE TABLE statement of the dialect's DDL file, for this table's name. */
  String createStatement(Dialect dialect) {
    String withoutComments =
        ddlFileText(dialect)
            .lines()
            .filter(line -> !line.strip().startsWith("--"))
            .collect(Collectors.joining("\n"))
            .strip();
    if (withoutComments.endsWith(";")) {
      withoutComments = withoutComments.substring(0, withoutComments.length() - 1);
    }
    return DEFAULT_NAME_IN_DDL.matcher(withoutComments).replaceAll(Matcher.quoteReplacement(qualifiedName));
  }

  /** The DDL file exactly as shipped in the jar, with the default table name. */
  static String ddlFileText(Dialect dialect) {
    try (InputStream in = LeaseTable.class.getResourceAsStream(dialect.ddlFile())) {
      if (in == null) {
        throw new IllegalStateException("DDL resource " + ddlResourcePath(dialect) + " is missing from the jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read DDL resource " + ddlResourcePath(dialect), e);
    }
  }

  /** Where the DDL file sits in the jar, for messages that point administrators to it. */
  static String ddlResourcePath(Dialect dialect) {
    return LeaseTable.class.getPackageName().replace('.', '/') + "/" + dialect.ddlFile();
  }

  /** LISTEN/NOTIFY channel: at most 63 characters, the same for every store on this table. */
  String channel() {
    String channel = ("baton_" + qualifiedName).toLowerCase(Locale.ROOT);
    if (channel.length() <= 63) {
      return channel;
    }
    return channel.substring(0, 54) + "_" + String.format("%08x", channel.hashCode());
  }

  /** Fails (with the database's error) unless the table exists and may be read. */
  void probe(DSLContext dsl) {
    dsl.selectOne().from(table).where(falseCondition()).fetch();
  }

  /** H2 only: creates the election's row, free, unless it exists; locks it either way. */
  /**
   * Timestamps are kept to the millisecond, so the database's now() can read up to a millisecond
   * before the call really started; without this margin a lease could end a fraction of a
   * millisecond before t0 + ttl, which the H2 fuzz test caught.
   */
  static final long TRUNCATION_MARGIN_MILLIS = 1;

  void ensureRow(DSLContext dsl, String electionName) {
    dsl.execute("merge into {0} ({1}) key ({1}) values ({2})", table, field(unquotedName("election")), val(electionName));
  }

  /**
   * The acquire: one statement that inserts the row, or takes it over when it is free, expired or
   * already the candidate's, always starting a new term. The database's clock judges expiry.
   *
   * <p>On MariaDB/MySQL, ON DUPLICATE KEY UPDATE assigns left to right and later conditions see
   * the values already assigned: {@code term} and {@code holder} come first and {@code
   * expires_at} last, or a refused takeover would still extend the current holder's lease.
   *
   * @return the update count: 0 when refused on PostgreSQL and H2; on MariaDB/MySQL a refusal may
   *     count 1, like an insert, so the caller also reads the row back
   */
  int upsert(DSLContext dsl, Dialect dialect, String electionName, String candidate, long ttl) {
    Field<Long> ttlValue = val(ttl);
    Field<Long> expiryOffset = val(ttl + TRUNCATION_MARGIN_MILLIS);
    Field<OffsetDateTime> now = dialect.now();
    Condition mayTake = expiresAt.le(now).or(holder.isNull()).or(holder.eq(candidate));
    return dsl.insertInto(table)
        .columns(election, holder, term, ttlMillis, acquiredAt, renewedAt, expiresAt)
        .values(val(electionName), val(candidate), val(1L), ttlValue, now, now, dialect.nowPlusMillis(expiryOffset))
        .onConflict(election)
        .doUpdate()
        .set(term, term.plus(1))
        .set(holder, candidate)
        .set(ttlMillis, ttlValue)
        .set(acquiredAt, now)
        .set(renewedAt, now)
        .set(expiresAt, dialect.nowPlusMillis(expiryOffset))
        .where(mayTake)
        .execute();
  }

  /** The election's row, locked until the transaction ends. */
  Optional<LeaseRow> readForUpdate(DSLContext dsl, Dialect dialect, String electionName) {
    return selectRow(dsl, dialect, electionName).forUpdate().fetchOptional().map(LeaseTable::toRow);
  }

  Optional<LeaseRow> read(DSLContext dsl, Dialect dialect, String electionName) {
    return selectRow(dsl, dialect, electionName).fetchOptional().map(LeaseTable::toRow);
  }

  private org.jooq.SelectConditionStep<Record5<String, Long, Long, Long, Long>> selectRow(
      DSLContext dsl, Dialect dialect, String electionName) {
    return dsl.select(holder, term, ttlMillis, dialect.epochMillis(renewedAt), dialect.millisUntil(expiresAt))
        .from(table)
        .where(election.eq(electionName));
  }

  private static LeaseRow toRow(Record5<String, Long, Long, Long, Long> r) {
    return new LeaseRow(r.value1(), r.value2(), r.value3(), r.value4(), r.value5());
  }

  /** Extends an unexpired lease of this holder and term; returns the rows matched or changed. */
  int renew(DSLContext dsl, Dialect dialect, String electionName, String candidate, long token, long ttl) {
    Field<Long> ttlValue = val(ttl);
    return dsl.update(table)
        .set(ttlMillis, ttlValue)
        .set(renewedAt, dialect.now())
        .set(expiresAt, dialect.nowPlusMillis(val(ttl + TRUNCATION_MARGIN_MILLIS)))
        .where(election.eq(electionName), holder.eq(candidate), term.eq(token), expiresAt.gt(dialect.now()))
        .execute();
  }

  /** Frees the lease of this holder and term at once; keeps the row and its term. */
  int release(DSLContext dsl, Dialect dialect, String electionName, String candidate, long token) {
    return dsl.update(table)
        .set(holder, (String) null)
        .set(expiresAt, dialect.now())
        .where(election.eq(electionName), holder.eq(candidate), term.eq(token))
        .execute();
  }

  /**
   * True when the row shows this holder and term unexpired; the row stays locked until the
   * transaction ends, so no takeover can commit in between. A shared lock where the database has
   * one, so that one leader's guarded transactions do not wait for each other.
   */
  boolean lockIfCurrent(DSLContext dsl, Dialect dialect, String electionName, String candidate, long token) {
    var select =
        dsl.select(term)
            .from(table)
            .where(election.eq(electionName), holder.eq(candidate), term.eq(token), expiresAt.gt(dialect.now()));
    return (dialect == Dialect.H2 ? select.forUpdate() : select.forShare()).fetchOptional().isPresent();
  }
}
