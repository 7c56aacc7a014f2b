package dev.baton.jdbc;

import static dev.baton.jdbc.LeaseTable.TRUNCATION_MARGIN_MILLIS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.baton.election.MonotonicClock;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The statements on one lease table for one database, put together once when the store first meets
 * its database and then run as plain JDBC prepared statements: a service calls its store a few
 * times a second at most, so its code runs mostly interpreted, and building and rendering queries
 * per call cost more than the database's own work. Each call is as few round trips as the database
 * allows: on PostgreSQL every call is one, the notification to followers included.
 *
 * <p>How an acquire tells a grant from a refusal: a live lease is never granted again, not even to
 * its holder's id, so a refusal may leave the candidate's own name in the row (another live
 * candidate with the same id). The statement that decides says whether it granted: on PostgreSQL
 * the notice it sends only for a grant, on H2 its update count, on MariaDB and MySQL the
 * connection's {@code last_insert_id()}, which the grant sets to the new term and a refusal to 0.
 */
final class LeaseStatements {

  /** An acquire's decision: the row it left, and whether it granted. */
  record Decision(LeaseRow row, boolean granted) {}

  /** A row as the store reads it; times are the database's, computed in SQL. */
  record LeaseRow(
      String holder, long term, long ttlMillis, long renewedAtEpochMillis, long expiresInMillis) {

    boolean isLive() {
      return holder != null && expiresInMillis > 0;
    }
  }

  /**
   * Elections per notification of a batch renewal: a running sum of their sizes in bytes (name,
   * length prefix) divided by this gives the notification an election goes into, so that one
   * payload stays under PostgreSQL's 8000 bytes with room for the longest name (255 characters of
   * up to 4 bytes) and the header.
   */
  private static final int NOTICE_CHUNK_BYTES = 6000;

  /**
   * How many leases the statements that renew a batch at once name, on the databases without
   * PostgreSQL's arrays: powers of two, then the batch limit. A batch is padded to the next size by
   * repeating its last lease, so that the driver and the server see eleven statement texts, never
   * one per batch size; a lease named twice still counts one row.
   */
  private static final int[] RENEW_IN_SIZES = renewInSizes(JdbcLeaseStore.RENEW_BATCH_LIMIT);

  private final Dialect dialect;
  private final String channel;
  private final int queryTimeoutSeconds;
  private final String ensureRow; // H2 only
  private final String acquire;
  private final String readBackForUpdate; // where the acquire cannot return the row itself
  private final String renew;
  private final String renewAll; // PostgreSQL only
  private final String[] renewIn; // the others: one per RENEW_IN_SIZES
  private final String[]
      lockIn; // the others: locks the rows no other transaction holds, one per RENEW_IN_SIZES
  private final String release;
  private final String read;
  private final String lockRow; // H2: what the wait in seconds is appended to
  private final String readAll; // PostgreSQL only
  private final String lockIfCurrent;
  private final MonotonicClock clock;

  LeaseStatements(
      LeaseTable table, Dialect dialect, int queryTimeoutSeconds, MonotonicClock clock) {
    this.clock = clock;
    this.dialect = dialect;
    this.channel = table.channel();
    this.queryTimeoutSeconds = queryTimeoutSeconds;
    String t = table.qualifiedName();
    String now = dialect.now();
    String plus = dialect.nowPlusMillis();
    String row =
        "holder, term, ttl_millis, "
            + dialect.epochMillis("renewed_at")
            + ", "
            + dialect.millisUntil("expires_at");
    String renewUpdate =
        "update "
            + t
            + " set ttl_millis = ?, renewed_at = "
            + now
            + ", expires_at = "
            + plus
            + " where election = ? and holder = ? and term = ? and expires_at > "
            + now;
    String releaseUpdate =
        "update "
            + t
            + " set holder = null, expires_at = "
            + now
            + " where election = ? and holder = ? and term = ?";
    this.read = "select " + row + " from " + t + " where election = ?";
    this.lockRow = "select election from " + t + " where election = ? for update wait ";
    String lockCheck =
        "select term from "
            + t
            + " where election = ? and holder = ? and term = ? and expires_at > "
            + now;
    String insertValues = insertValues(dialect.nextTerm("0"), now, plus);
    String insert = "insert into " + t + insertValues;
    switch (dialect) {
      case POSTGRESQL -> {
        this.ensureRow = null;
        // The upsert locks the row even when its condition refuses, so the second statement,
        // sent in the same round trip and the same implicit transaction, reads the row it left.
        this.acquire =
            "with granted as (insert into "
                + t
                + " as l"
                + insertValues
                + " on conflict (election) do update set term = "
                + dialect.nextTerm("l.term")
                + ", holder = excluded.holder, ttl_millis = excluded.ttl_millis,"
                + " acquired_at = "
                + now
                + ", renewed_at = "
                + now
                + ", expires_at = "
                + plus
                + " where l.expires_at <= "
                + now
                + " or l.holder is null returning 1)"
                + " select pg_notify(?, ?) from granted;\n"
                + read;
        this.readBackForUpdate = null;
        this.renew =
            "with renewed as (" + renewUpdate + " returning 1) select pg_notify(?, ?) from renewed";
        this.release =
            "with released as ("
                + releaseUpdate
                + " returning 1) select pg_notify(?, ?) from released";
        this.renewIn = null;
        this.lockIn = null;
        this.renewAll =
            "with asked (election, holder, term, ttl, i) as ("
                + "select * from unnest(cast(? as varchar[]), cast(? as varchar[]), cast(? as bigint[]), cast(? as bigint[])) with ordinality),"
                // The update is driven by the locked rows and finds each by its key. Written as
                // "election in (select ... from lockable)" instead, the planner (which takes
                // unnest for 10 rows) compared every row with every locked one: 200 ms for a
                // batch of 1000 instead of 20, and 10,000 elections no longer kept up.
                + " lockable as (select asked.* from "
                + t
                + " as l join asked on l.election = asked.election"
                + dialect.lockSkippingLocked("l")
                + "),"
                + " renewed as (update "
                + t
                + " as l set ttl_millis = k.ttl, renewed_at = "
                + now
                + ", expires_at = "
                + now
                + " + (k.ttl + "
                + TRUNCATION_MARGIN_MILLIS
                + ") * interval '1 millisecond'"
                + " from lockable as k where l.election = k.election and l.holder = k.holder and l.term = k.term and l.expires_at > "
                + now
                + " returning k.i, k.election, k.ttl),"
                + " chunked as (select election, ttl, sum(octet_length(election) + 5) over (partition by ttl order by i) / "
                + NOTICE_CHUNK_BYTES
                + " as chunk from renewed),"
                + " notified as (select pg_notify(?, 'R' || (ttl + "
                + TRUNCATION_MARGIN_MILLIS
                + ") || ' '"
                + " || string_agg(char_length(election) || ':' || election, '')) from chunked group by ttl, chunk)"
                + " select i from renewed union all select 0 from notified";
        this.readAll =
            "select election, "
                + row
                + " from "
                + t
                + " where election = any(cast(? as varchar[]))";
        this.lockIfCurrent = lockCheck + " for share";
      }
      case MARIADB, MYSQL -> {
        this.ensureRow = null;
        // ON DUPLICATE KEY UPDATE assigns left to right and later conditions see the values
        // already assigned, so the decision is made once, by the first assignment, on the row as
        // it was: it leaves last_insert_id() at the new term for a grant and at 0 for a refusal,
        // and every later column follows that. The insert's own term sets it for a new row.
        String mayTake = "last_insert_id() <> 0";
        String upsert =
            "insert into "
                + t
                + insertValues("last_insert_id(" + dialect.nextTerm("0") + ")", now, plus)
                + " on duplicate key update"
                + " term = case when expires_at <= "
                + now
                + " or holder is null then last_insert_id("
                + dialect.nextTerm("term")
                + ") else term + last_insert_id(0) end,"
                + " holder = case when "
                + mayTake
                + " then values(holder) else holder end,"
                + " ttl_millis = case when "
                + mayTake
                + " then values(ttl_millis) else ttl_millis end,"
                + " acquired_at = case when "
                + mayTake
                + " then "
                + now
                + " else acquired_at end,"
                + " renewed_at = case when "
                + mayTake
                + " then "
                + now
                + " else renewed_at end,"
                + " expires_at = case when "
                + mayTake
                + " then "
                + plus
                + " else expires_at end";
        // MariaDB returns the row the upsert left, inserted, taken over or refused (10.5+);
        // MySQL has no RETURNING and reads it back under the upsert's row lock.
        this.acquire =
            dialect == Dialect.MARIADB
                ? upsert + " returning " + row + ", last_insert_id()"
                : upsert;
        this.readBackForUpdate =
            dialect == Dialect.MARIADB
                ? null
                : "select "
                    + row
                    + ", last_insert_id() from "
                    + t
                    + " where election = ? for update";
        this.renew = renewUpdate;
        this.release = releaseUpdate;
        this.renewAll = null;
        this.renewIn = renewIn(t, dialect);
        this.lockIn = lockIn(t, dialect);
        this.readAll = null;
        this.lockIfCurrent =
            lockCheck + (dialect == Dialect.MARIADB ? " lock in share mode" : " for share");
      }
      case H2 -> {
        // H2's MERGE ... USING lets two concurrent first inserts of one key collide with a
        // duplicate-key error; MERGE ... KEY creates the free row (the DDL's defaults) or locks
        // the existing one, retried by H2 on such a collision, and the grant is then an update.
        this.ensureRow = "merge into " + t + " (election) key (election) values (?)";
        this.acquire =
            "update "
                + t
                + " set term = "
                + dialect.nextTerm("term")
                + ", holder = ?, ttl_millis = ?, acquired_at = "
                + now
                + ", renewed_at = "
                + now
                + ", expires_at = "
                + plus
                + " where election = ? and (expires_at <= "
                + now
                + " or holder is null)";
        this.readBackForUpdate = read + " for update";
        this.renew = renewUpdate;
        this.release = releaseUpdate;
        this.renewAll = null;
        this.renewIn = renewIn(t, dialect);
        this.lockIn = lockIn(t, dialect);
        this.readAll = null;
        this.lockIfCurrent = lockCheck + " for update";
      }
      default -> throw new IllegalArgumentException("no statements for " + dialect);
    }
  }

  private static String insertValues(String term, String now, String plus) {
    return " (election, holder, term, ttl_millis, acquired_at, renewed_at, expires_at) values (?, ?, "
        + term
        + ", ?, "
        + now
        + ", "
        + now
        + ", "
        + plus
        + ")";
  }

  /**
   * One update per size of {@link #RENEW_IN_SIZES} that renews the unexpired leases it names. The
   * list of election names alone is what the primary key answers ({@link Dialect#byKey} makes
   * MariaDB and MySQL use it); the list of rows then keeps only the leases whose holder and term
   * still match.
   */
  private static String[] renewIn(String t, Dialect dialect) {
    String now = dialect.now();
    String plus = dialect.nowPlusMillis();
    String[] statements = new String[RENEW_IN_SIZES.length];
    for (int k = 0; k < RENEW_IN_SIZES.length; k++) {
      int size = RENEW_IN_SIZES[k];
      StringBuilder sql =
          new StringBuilder(64 + size * 14)
              .append("update ")
              .append(t)
              .append(dialect.byKey())
              .append(" set ttl_millis = ?, renewed_at = ")
              .append(now)
              .append(", expires_at = ")
              .append(plus)
              .append(" where election in (?");
      sql.append(", ?".repeat(size - 1)).append(") and (election, holder, term) in ((?, ?, ?)");
      sql.append(", (?, ?, ?)".repeat(size - 1)).append(") and expires_at > ").append(now);
      statements[k] = sql.toString();
    }
    return statements;
  }

  /**
   * One select per size of {@link #RENEW_IN_SIZES} that locks the rows it names unless another
   * transaction holds them.
   */
  private static String[] lockIn(String t, Dialect dialect) {
    String[] statements = new String[RENEW_IN_SIZES.length];
    for (int k = 0; k < RENEW_IN_SIZES.length; k++) {
      statements[k] =
          "select election from "
              + t
              + dialect.byKey()
              + " where election in (?"
              + ", ?".repeat(RENEW_IN_SIZES[k] - 1)
              + ")"
              + dialect.lockSkippingLocked(t);
    }
    return statements;
  }

  private static int[] renewInSizes(int limit) {
    List<Integer> sizes = new ArrayList<>();
    for (int size = 1; size < limit; size *= 2) {
      sizes.add(size);
    }
    sizes.add(limit);
    return sizes.stream().mapToInt(Integer::intValue).toArray();
  }

  Dialect dialect() {
    return dialect;
  }

  /** Whether {@link #acquire} must run in a transaction (several statements under one row lock). */
  boolean acquireNeedsTransaction() {
    return readBackForUpdate != null;
  }

  /**
   * Whether {@link #renewAll} must run in a transaction: one update per TTL, and after one that
   * renewed fewer leases than it named, a JDBC batch of single renewals, under one commit.
   */
  boolean renewAllNeedsTransaction() {
    return renewAll == null;
  }

  /**
   * Grants the election to the candidate if it is free or expired, and returns the row as the
   * decision left it and whether it granted. A live lease is refused even to its own holder's id.
   * Empty only if the row vanished meanwhile.
   */
  Optional<Decision> acquire(
      Connection c, String election, String candidate, long ttl, long deadline)
      throws SQLException {
    long expiry = ttl + TRUNCATION_MARGIN_MILLIS;
    switch (dialect) {
      case POSTGRESQL -> {
        try (PreparedStatement s = prepare(c, acquire, deadline)) {
          bindInsert(s, election, candidate, ttl, expiry);
          s.setLong(5, expiry);
          s.setString(6, channel);
          s.setString(7, LeaseNotice.granted(election, expiry));
          s.setString(8, election);
          if (!s.execute()) {
            throw new SQLException("the acquire's notice returned no result set");
          }
          boolean granted;
          try (ResultSet notified = s.getResultSet()) {
            granted = notified.next(); // a notice goes out for a grant only
          }
          if (!s.getMoreResults()) {
            throw new SQLException("the acquire's read-back returned no result set");
          }
          try (ResultSet rs = s.getResultSet()) {
            return rs.next() ? Optional.of(new Decision(row(rs, 1), granted)) : Optional.empty();
          }
        }
      }
      case MARIADB -> {
        try (PreparedStatement s = prepare(c, acquire, deadline)) {
          bindInsert(s, election, candidate, ttl, expiry);
          s.setLong(5, expiry);
          try (ResultSet rs = s.executeQuery()) {
            return rs.next() ? Optional.of(markedDecision(rs)) : Optional.empty();
          }
        }
      }
      case MYSQL -> {
        try (PreparedStatement s = prepare(c, acquire, deadline)) {
          bindInsert(s, election, candidate, ttl, expiry);
          s.setLong(5, expiry);
          s.executeUpdate();
        }
        try (PreparedStatement s = prepare(c, readBackForUpdate, deadline)) {
          s.setString(1, election);
          try (ResultSet rs = s.executeQuery()) {
            return rs.next() ? Optional.of(markedDecision(rs)) : Optional.empty();
          }
        }
      }
      case H2 -> {
        // The guarded update first: H2 locks a row only once its condition holds on the committed
        // row, so an attempt that a live lease refuses takes no lock. Had every attempt locked the
        // row (as the MERGE does), the refused ones would queue behind each other's transactions,
        // each holding the row across its round trips: on a busy machine the queue outlasts the
        // call timeout, and aborted calls leave their server sessions still queued.
        if (updateToAcquire(c, election, candidate, ttl, expiry, deadline) == 1) {
          return readRow(c, readBackForUpdate, election, deadline).map(r -> new Decision(r, true));
        }
        Optional<LeaseRow> refusedBy = readRow(c, read, election, deadline);
        if (refusedBy.isPresent()) {
          // Read without the lock, so only the update's count says whether this call granted.
          return refusedBy.map(r -> new Decision(r, false));
        }
        // No row yet: the first attempt of the election creates it, then decides under its lock.
        try (PreparedStatement s = prepare(c, ensureRow, deadline)) {
          s.setString(1, election);
          s.executeUpdate();
        }
        boolean granted = updateToAcquire(c, election, candidate, ttl, expiry, deadline) == 1;
        return readRow(c, readBackForUpdate, election, deadline).map(r -> new Decision(r, granted));
      }
      default -> throw new IllegalStateException("no acquire for " + dialect);
    }
  }

  /** The row and, after it, {@code last_insert_id()}: the new term for a grant, 0 for a refusal. */
  private static Decision markedDecision(ResultSet rs) throws SQLException {
    LeaseRow row = row(rs, 1);
    return new Decision(row, rs.getLong(6) == row.term());
  }

  private int updateToAcquire(
      Connection c, String election, String candidate, long ttl, long expiry, long deadline)
      throws SQLException {
    try (PreparedStatement s = prepare(c, acquire, deadline)) {
      s.setString(1, candidate);
      s.setLong(2, ttl);
      s.setLong(3, expiry);
      s.setString(4, election);
      return s.executeUpdate();
    }
  }

  private static void bindInsert(
      PreparedStatement s, String election, String candidate, long ttl, long expiry)
      throws SQLException {
    s.setString(1, election);
    s.setString(2, candidate);
    s.setLong(3, ttl);
    s.setLong(4, expiry);
  }

  /**
   * Locks the election's row for the rest of the transaction, waiting for another transaction's
   * lock (a guarded write) only until {@code deadline}; see {@link Dialect#bindsLockWaitInSql}.
   *
   * @throws SQLException H2's lock timeout (50200) when the row stayed locked until the deadline
   */
  void lockWithin(Connection c, String election, long deadline) throws SQLException {
    long leftMillis = Math.max(1, NANOSECONDS.toMillis(deadline - clock.nanoTime()));
    // H2 takes the wait only as a literal number of seconds, not as a parameter.
    String wait = String.format(Locale.ROOT, "%d.%03d", leftMillis / 1000, leftMillis % 1000);
    try (PreparedStatement s = prepare(c, lockRow + wait, deadline)) {
      s.setString(1, election);
      s.executeQuery().close();
    }
  }

  /**
   * Extends an unexpired lease of this holder and term (on PostgreSQL and notifies followers of its
   * new expiry).
   *
   * @return true when the row was changed; false when it was not, which on MariaDB with {@code
   *     useAffectedRows=true} also happens to a renewal within the grant's millisecond
   */
  boolean renew(
      Connection c, String election, String candidate, long token, long ttl, long deadline)
      throws SQLException {
    long expiry = ttl + TRUNCATION_MARGIN_MILLIS;
    try (PreparedStatement s = prepare(c, renew, deadline)) {
      s.setLong(1, ttl);
      s.setLong(2, expiry);
      s.setString(3, election);
      s.setString(4, candidate);
      s.setLong(5, token);
      if (dialect == Dialect.POSTGRESQL) {
        s.setString(6, channel);
        s.setString(7, LeaseNotice.renewed(election, expiry));
        return hasRow(s);
      }
      return s.executeUpdate() > 0;
    }
  }

  /**
   * Renews a batch of leases in one statement (PostgreSQL, which also notifies followers in a few
   * payloads) or, on the others, in one update per TTL, which the caller runs in a transaction.
   * Only when such an update renewed fewer rows than the leases it named does a JDBC batch of
   * single renewals, in the same transaction, find out which were lost: renewing a live lease twice
   * does no harm.
   *
   * @return per lease, true when its row was surely renewed; false when the row must be read to
   *     tell (lost, or a MariaDB renewal that changed nothing)
   */
  boolean[] renewAll(
      Connection c,
      List<String> elections,
      List<String> candidates,
      long[] tokens,
      long[] ttls,
      long deadline)
      throws SQLException {
    int n = elections.size();
    boolean[] renewed = new boolean[n];
    if (renewAll != null) {
      Long[] boxedTokens = new Long[n];
      Long[] boxedTtls = new Long[n];
      for (int i = 0; i < n; i++) {
        boxedTokens[i] = tokens[i];
        boxedTtls[i] = ttls[i];
      }
      try (PreparedStatement s = prepare(c, renewAll, deadline)) {
        Array electionArray = c.createArrayOf("varchar", elections.toArray(new String[0]));
        Array candidateArray = c.createArrayOf("varchar", candidates.toArray(new String[0]));
        Array tokenArray = c.createArrayOf("int8", boxedTokens);
        Array ttlArray = c.createArrayOf("int8", boxedTtls);
        s.setArray(1, electionArray);
        s.setArray(2, candidateArray);
        s.setArray(3, tokenArray);
        s.setArray(4, ttlArray);
        s.setString(5, channel);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            int i = rs.getInt(1);
            if (i > 0) {
              renewed[i - 1] = true;
            }
          }
        }
      }
      return renewed;
    }
    // Rows a guarded write holds are left out, unrenewed: the read that follows tells their leases.
    Set<String> lockable = lockable(c, elections, deadline);
    Map<Long, List<Integer>> byTtl = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      if (lockable.contains(elections.get(i))) {
        byTtl.computeIfAbsent(ttls[i], ttl -> new ArrayList<>()).add(i);
      }
    }
    int most = RENEW_IN_SIZES[RENEW_IN_SIZES.length - 1];
    List<Integer> unsure = new ArrayList<>();
    for (List<Integer> sameTtl : byTtl.values()) {
      for (int from = 0; from < sameTtl.size(); from += most) {
        List<Integer> chunk = sameTtl.subList(from, Math.min(sameTtl.size(), from + most));
        if (renewAtOnce(c, chunk, elections, candidates, tokens, ttls[chunk.get(0)], deadline)) {
          chunk.forEach(i -> renewed[i] = true);
        } else {
          unsure.addAll(chunk);
        }
      }
    }
    if (!unsure.isEmpty()) {
      renewOneByOne(c, unsure, elections, candidates, tokens, ttls, renewed, deadline);
    }
    return renewed;
  }

  /** The elections whose rows this transaction now holds: those no other transaction held. */
  private Set<String> lockable(Connection c, List<String> elections, long deadline)
      throws SQLException {
    List<String> distinct = new ArrayList<>(new LinkedHashSet<>(elections));
    Set<String> locked = new HashSet<>();
    int most = RENEW_IN_SIZES[RENEW_IN_SIZES.length - 1];
    for (int from = 0; from < distinct.size(); from += most) {
      List<String> chunk = distinct.subList(from, Math.min(distinct.size(), from + most));
      int k = 0;
      while (RENEW_IN_SIZES[k] < chunk.size()) {
        k++;
      }
      try (PreparedStatement s = prepare(c, lockIn[k], deadline)) {
        for (int j = 0; j < RENEW_IN_SIZES[k]; j++) {
          s.setString(1 + j, chunk.get(Math.min(j, chunk.size() - 1)));
        }
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            locked.add(rs.getString(1));
          }
        }
      }
    }
    return locked;
  }

  /** The lease a renewal names: two of them in one batch count one row. */
  private record Named(String election, String candidate, long token) {}

  /**
   * Renews the leases at {@code chunk} (indexes into the batch, one TTL) in one update, padded to
   * the next of {@link #RENEW_IN_SIZES}.
   *
   * @return true when the update counted a row for every distinct lease it named, so each of them
   *     was renewed (each row holds one election, so a count that high leaves no lease out); false
   *     when some may not have been
   */
  private boolean renewAtOnce(
      Connection c,
      List<Integer> chunk,
      List<String> elections,
      List<String> candidates,
      long[] tokens,
      long ttl,
      long deadline)
      throws SQLException {
    int k = 0;
    while (RENEW_IN_SIZES[k] < chunk.size()) {
      k++;
    }
    int size = RENEW_IN_SIZES[k];
    Set<Named> distinct = new HashSet<>();
    try (PreparedStatement s = prepare(c, renewIn[k], deadline)) {
      s.setLong(1, ttl);
      s.setLong(2, ttl + TRUNCATION_MARGIN_MILLIS);
      int last = chunk.size() - 1;
      for (int j = 0; j < size; j++) {
        int i = chunk.get(Math.min(j, last));
        s.setString(3 + j, elections.get(i));
        int row = 3 + size + 3 * j;
        s.setString(row, elections.get(i));
        s.setString(row + 1, candidates.get(i));
        s.setLong(row + 2, tokens[i]);
        if (j <= last) {
          distinct.add(new Named(elections.get(i), candidates.get(i), tokens[i]));
        }
      }
      return s.executeUpdate() == distinct.size();
    }
  }

  /**
   * Renews the leases at {@code which} one statement each, in one JDBC batch, marking those surely
   * renewed.
   */
  private void renewOneByOne(
      Connection c,
      List<Integer> which,
      List<String> elections,
      List<String> candidates,
      long[] tokens,
      long[] ttls,
      boolean[] renewed,
      long deadline)
      throws SQLException {
    try (PreparedStatement s = prepare(c, renew, deadline)) {
      for (int i : which) {
        s.setLong(1, ttls[i]);
        s.setLong(2, ttls[i] + TRUNCATION_MARGIN_MILLIS);
        s.setString(3, elections.get(i));
        s.setString(4, candidates.get(i));
        s.setLong(5, tokens[i]);
        s.addBatch();
      }
      int[] counts = s.executeBatch();
      for (int j = 0; j < which.size() && j < counts.length; j++) {
        // SUCCESS_NO_INFO (a driver that sends the batch in bulk) leaves it to the read.
        renewed[which.get(j)] = counts[j] > 0;
      }
    }
  }

  /**
   * Frees the lease of this holder and term at once, keeping the row and its term; notifies on
   * PostgreSQL.
   */
  boolean release(Connection c, String election, String candidate, long token, long deadline)
      throws SQLException {
    try (PreparedStatement s = prepare(c, release, deadline)) {
      s.setString(1, election);
      s.setString(2, candidate);
      s.setLong(3, token);
      if (dialect == Dialect.POSTGRESQL) {
        s.setString(4, channel);
        s.setString(5, LeaseNotice.released(election));
        return hasRow(s);
      }
      return s.executeUpdate() > 0;
    }
  }

  Optional<LeaseRow> read(Connection c, String election, long deadline) throws SQLException {
    return readRow(c, read, election, deadline);
  }

  /**
   * The rows of these elections, by election; one statement on PostgreSQL, one per election
   * elsewhere.
   */
  Map<String, LeaseRow> readAll(Connection c, List<String> elections, long deadline)
      throws SQLException {
    Map<String, LeaseRow> rows = new HashMap<>();
    if (readAll == null) {
      for (String election : elections) {
        readRow(c, read, election, deadline).ifPresent(r -> rows.put(election, r));
      }
      return rows;
    }
    try (PreparedStatement s = prepare(c, readAll, deadline)) {
      s.setArray(1, c.createArrayOf("varchar", elections.toArray(new String[0])));
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          rows.put(rs.getString(1), row(rs, 2));
        }
      }
    }
    return rows;
  }

  /**
   * True when the row shows this holder and term unexpired; the row stays locked until the
   * transaction ends, so no takeover can commit in between. A shared lock where the database has
   * one, so that one leader's guarded transactions do not wait for each other.
   */
  boolean lockIfCurrent(Connection c, String election, String candidate, long token, long deadline)
      throws SQLException {
    try (PreparedStatement s = prepare(c, lockIfCurrent, deadline)) {
      s.setString(1, election);
      s.setString(2, candidate);
      s.setLong(3, token);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Runs a DDL statement. */
  void execute(Connection c, String sql, long deadline) throws SQLException {
    Transactions.limitNetwork(c, deadline, clock);
    try (Statement s = c.createStatement()) {
      s.setQueryTimeout(queryTimeoutSeconds);
      s.execute(sql);
    }
  }

  private Optional<LeaseRow> readRow(Connection c, String sql, String election, long deadline)
      throws SQLException {
    try (PreparedStatement s = prepare(c, sql, deadline)) {
      s.setString(1, election);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? Optional.of(row(rs, 1)) : Optional.empty();
      }
    }
  }

  private static boolean hasRow(PreparedStatement s) throws SQLException {
    try (ResultSet rs = s.executeQuery()) {
      return rs.next();
    }
  }

  private static LeaseRow row(ResultSet rs, int first) throws SQLException {
    return new LeaseRow(
        rs.getString(first),
        rs.getLong(first + 1),
        rs.getLong(first + 2),
        rs.getLong(first + 3),
        rs.getLong(first + 4));
  }

  /**
   * A statement whose round trips end by {@code deadline}, with the JDBC query timeout as a
   * backstop.
   */
  private PreparedStatement prepare(Connection c, String sql, long deadline) throws SQLException {
    Transactions.limitNetwork(c, deadline, clock);
    PreparedStatement s = c.prepareStatement(sql);
    try {
      s.setQueryTimeout(queryTimeoutSeconds);
    } catch (SQLException | RuntimeException e) {
      s.close();
      throw e;
    }
    return s;
  }
}
