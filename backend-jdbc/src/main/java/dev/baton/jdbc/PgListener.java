package dev.baton.jdbc;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.baton.election.MonotonicClock;
import dev.baton.election.Subscription;
import dev.baton.jdbc.LeaseStatements.LeaseRow;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jooq.ConnectionProvider;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL LISTEN on the lease table's channel, for every election of one store: one dedicated
 * connection and one daemon thread, started by the first watch. Grants, renewals and releases
 * notify in their own statement, so a follower hears of them at commit ({@link LeaseNotice}).
 *
 * <p>It also reports expiry, so that followers need not poll: for each watched election it keeps
 * the moment the lease runs out at the earliest, as last heard (a grant or renewal says when,
 * counted from the notification's arrival, which is never early), as read when the watch began or
 * the connection came back, or as the store's own calls saw it, and runs the election's watchers
 * when that moment passes without a newer word. The thread itself is the timer: it waits for
 * notifications no longer than until the next such moment. A store call's sighting reaches the
 * thread within {@value #POLL_MILLIS} ms.
 *
 * <p>When the connection breaks, the thread reconnects, runs every watcher once (notifications sent
 * in between are lost) and reads the current expiries again. Meanwhile its timers still run, armed
 * by what the store's own calls see.
 */
final class PgListener implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PgListener.class);

  /** How long one wait for notifications blocks at most; also how quickly close() is noticed. */
  private static final int POLL_MILLIS = 100;

  /** How long a connection may stay silent before it is checked, so that a dead one is replaced. */
  private static final long CHECK_EVERY_NANOS = Duration.ofSeconds(5).toNanos();

  private static final long RECONNECT_DELAY_NANOS = Duration.ofSeconds(1).toNanos();

  /** A sighting that asks for the election's row to be read: a new watch. */
  private static final long LOOK_UP = Long.MIN_VALUE;

  private final ConnectionProvider connections;
  private final LeaseStatements statements;
  private final String channel;
  private final Duration callTimeout;
  private final MonotonicClock clock;
  private final Map<String, List<Runnable>> watchers = new ConcurrentHashMap<>();

  /** Leaders watching their own lease, per election ({@link #addLeaseWatch}). */
  private final Map<String, List<LeaseWatch>> leaseWatches = new ConcurrentHashMap<>();

  /** Elections whose leaders' rows are to be read: granted or released, or a new lease watch. */
  private final Set<String> toCheck = ConcurrentHashMap.newKeySet();

  /** A leader's watch of its term: told once the row names another holder or term, or none. */
  private static final class LeaseWatch implements Subscription {
    private final String holder;
    private final long term;
    private final Runnable lost;
    private final Runnable onClose;
    private volatile boolean done;

    LeaseWatch(String holder, long term, Runnable lost, Runnable onClose) {
      this.holder = holder;
      this.term = term;
      this.lost = lost;
      this.onClose = onClose;
    }

    boolean stillHolds(LeaseRow row) {
      return row != null && row.isLive() && holder.equals(row.holder()) && term == row.term();
    }

    @Override
    public void close() {
      done = true;
      onClose.run();
    }
  }

  /** Expiries the store's calls saw, and new watches, for the thread to take in. */
  private final Queue<Sighting> sightings = new ConcurrentLinkedQueue<>();

  private final Object lifecycle = new Object();
  private Thread thread; // guarded by lifecycle
  private boolean closed; // guarded by lifecycle
  private volatile boolean running;

  // Owned by the listener thread once it has started.
  private Connection connection;
  private boolean previousAutoCommit;
  private int previousNetworkTimeout;

  /** When each watched election's lease runs out at the earliest (the store's clock). */
  private final Map<String, Long> expiries = new HashMap<>();

  /** Moments to look at {@link #expiries}; some stale, none missing. */
  private final PriorityQueue<Due> due = new PriorityQueue<>();

  private final Set<String> toLookUp = new LinkedHashSet<>();

  private record Sighting(String election, long expiresAtNanos) {}

  private record Due(long atNanos, String election) implements Comparable<Due> {
    @Override
    public int compareTo(Due other) {
      return Long.compare(atNanos - other.atNanos, 0);
    }
  }

  PgListener(
      ConnectionProvider connections,
      LeaseStatements statements,
      String channel,
      Duration callTimeout,
      MonotonicClock clock) {
    this.clock = clock;
    this.connections = connections;
    this.statements = statements;
    this.channel = channel;
    this.callTimeout = callTimeout;
  }

  /**
   * Registers {@code changed} for {@code election}. The first call opens the connection before it
   * returns, so that a release right after the watch was set up is not missed; if that fails, the
   * thread keeps trying and runs every watcher once it succeeds.
   */
  Subscription add(String election, Runnable changed) {
    watchers.compute(
        election,
        (k, list) -> {
          List<Runnable> l = list == null ? new CopyOnWriteArrayList<>() : list;
          l.add(changed);
          return l;
        });
    sightings.add(new Sighting(election, LOOK_UP));
    start();
    return () ->
        watchers.computeIfPresent(
            election, (k, list) -> list.remove(changed) && list.isEmpty() ? null : list);
  }

  /**
   * Tells {@code lost} once {@code election}'s row no longer names {@code holder} under {@code
   * term}. The row is read only when that can have happened: when a grant or a release of the
   * election is heard (never for a renewal, the leader's own included), once now (a takeover
   * between the grant and this watch sent its notification before anyone listened for it), and
   * after a reconnection (notifications in between are lost). A row deleted by hand sends no
   * notification: that leaves it to the leader's next renewal.
   */
  Subscription addLeaseWatch(String election, String holder, long term, Runnable lost) {
    LeaseWatch[] self = new LeaseWatch[1];
    self[0] =
        new LeaseWatch(
            holder,
            term,
            lost,
            () ->
                leaseWatches.computeIfPresent(
                    election, (k, list) -> list.remove(self[0]) && list.isEmpty() ? null : list));
    leaseWatches.computeIfAbsent(election, k -> new CopyOnWriteArrayList<>()).add(self[0]);
    toCheck.add(election);
    start(); // the thread reads the row within one wait for notifications (at most 100 ms)
    return self[0];
  }

  /** The store's own call saw {@code election}'s lease live for another {@code expiresInMillis}. */
  void observed(String election, long expiresInMillis) {
    if (watchers.containsKey(election)) {
      sightings.add(
          new Sighting(election, clock.nanoTime() + MILLISECONDS.toNanos(expiresInMillis)));
    }
  }

  private void start() {
    synchronized (lifecycle) {
      if (thread != null || closed) {
        return;
      }
      running = true;
      try {
        connect();
      } catch (SQLException | RuntimeException e) {
        log.warn(
            "Cannot LISTEN on PostgreSQL channel {}; followers act on what their own calls see until it works: {}",
            channel,
            e.toString());
      }
      thread = new Thread(this::run, "baton-jdbc-listen-" + channel);
      thread.setDaemon(true);
      thread.start();
    }
  }

  private void run() {
    boolean broken = connection == null;
    long lastTraffic = clock.nanoTime();
    long nextConnect = lastTraffic;
    while (running) {
      try {
        if (connection == null && clock.nanoTime() - nextConnect >= 0) {
          connect();
          if (broken) {
            log.info("LISTEN on PostgreSQL channel {} works again", channel);
          }
          broken = false;
          lastTraffic = clock.nanoTime();
          toLookUp.addAll(watchers.keySet());
          toCheck.addAll(leaseWatches.keySet());
          runAllWatchers();
        }
        takeSightings();
        if (connection != null && !toLookUp.isEmpty()) {
          lookUp();
          lastTraffic = clock.nanoTime();
        }
        if (connection != null && !toCheck.isEmpty()) {
          checkLeases();
          lastTraffic = clock.nanoTime();
        }
        runWatchersOfExpired();
        int wait = millisUntilNextDue();
        if (connection == null) {
          pause(Math.min(wait, Math.max(1, NANOSECONDS.toMillis(nextConnect - clock.nanoTime()))));
          continue;
        }
        PGNotification[] notifications =
            connection.unwrap(PGConnection.class).getNotifications(wait);
        if (notifications != null && notifications.length > 0) {
          lastTraffic = clock.nanoTime();
          for (PGNotification n : notifications) {
            heard(n.getParameter());
          }
        }
        if (clock.nanoTime() - lastTraffic > CHECK_EVERY_NANOS) {
          if (!connection.isValid(timeoutSeconds())) {
            throw new SQLException("the LISTEN connection stopped answering");
          }
          lastTraffic = clock.nanoTime();
        }
      } catch (SQLException | RuntimeException e) {
        if (!running) {
          break;
        }
        if (!broken) {
          log.warn(
              "LISTEN on PostgreSQL channel {} failed; reconnecting, followers act on what their own calls see meanwhile",
              channel,
              e);
          broken = true;
        }
        disconnect();
        nextConnect = clock.nanoTime() + RECONNECT_DELAY_NANOS;
      }
    }
    disconnect();
  }

  // ---- expiry, on the listener thread ----

  private void takeSightings() {
    for (Sighting s; (s = sightings.poll()) != null; ) {
      if (s.expiresAtNanos() == LOOK_UP) {
        toLookUp.add(s.election());
      } else {
        expiresAt(s.election(), s.expiresAtNanos());
      }
    }
  }

  /** Reads when the leases of the elections to look up run out, on the LISTEN connection. */
  private void lookUp() throws SQLException {
    List<String> elections = new ArrayList<>(toLookUp);
    toLookUp.clear();
    elections.removeIf(e -> !watchers.containsKey(e));
    if (elections.isEmpty()) {
      return;
    }
    Map<String, LeaseRow> rows;
    try {
      rows = statements.readAll(connection, elections, clock.nanoTime() + callTimeout.toNanos());
    } catch (SQLException e) {
      if (Failures.isMissingTable(e)) {
        return; // nobody has held a lease yet; the first grant will notify
      }
      throw e;
    } finally {
      connection.setNetworkTimeout(Runnable::run, networkTimeoutMillis());
    }
    long now = clock.nanoTime();
    for (String election : elections) {
      LeaseRow row = rows.get(election);
      if (row != null && row.isLive()) {
        expiresAt(election, now + MILLISECONDS.toNanos(row.expiresInMillis()));
      } else {
        expiries.remove(election);
      }
    }
  }

  /** Reads the rows of the elections whose leaders may have lost their terms, and tells them. */
  private void checkLeases() throws SQLException {
    List<String> elections = new ArrayList<>(toCheck);
    toCheck.removeAll(elections);
    elections.removeIf(e -> !leaseWatches.containsKey(e));
    if (elections.isEmpty()) {
      return;
    }
    Map<String, LeaseRow> rows;
    try {
      rows = statements.readAll(connection, elections, clock.nanoTime() + callTimeout.toNanos());
    } catch (SQLException e) {
      toCheck.addAll(elections); // read again on the next round, or after the reconnection
      throw e;
    } finally {
      connection.setNetworkTimeout(Runnable::run, networkTimeoutMillis());
    }
    for (String election : elections) {
      LeaseRow row = rows.get(election);
      for (LeaseWatch w : leaseWatches.getOrDefault(election, List.of())) {
        if (!w.done && !w.stillHolds(row)) {
          w.done = true;
          runContained(w.lost);
        }
      }
    }
  }

  private void expiresAt(String election, long atNanos) {
    if (!watchers.containsKey(election)) {
      return;
    }
    Long previous = expiries.put(election, atNanos);
    if (previous == null || atNanos - previous < 0) {
      due.add(new Due(atNanos, election));
    }
    // A later moment needs no entry of its own: the earlier one finds it and queues it.
  }

  private void runWatchersOfExpired() {
    long now = clock.nanoTime();
    for (Due d; (d = due.peek()) != null && d.atNanos() - now <= 0; ) {
      due.poll();
      Long at = expiries.get(d.election());
      if (at == null) {
        continue;
      }
      if (at - now > 0) {
        if (at != d.atNanos()) {
          due.add(new Due(at, d.election()));
        }
        continue;
      }
      expiries.remove(d.election());
      runWatchers(d.election());
    }
  }

  private int millisUntilNextDue() {
    Due next = due.peek();
    if (next == null) {
      return POLL_MILLIS;
    }
    long millis = NANOSECONDS.toMillis(next.atNanos() - clock.nanoTime()) + 1;
    return (int) Math.max(1, Math.min(POLL_MILLIS, millis));
  }

  /**
   * Acts on a notification: a grant or release wakes the watchers, every word says when the lease
   * runs out.
   */
  private void heard(String payload) {
    long now = clock.nanoTime();
    boolean readable =
        LeaseNotice.read(
            payload,
            (kind, election, expiresInMillis) -> {
              if (kind != LeaseNotice.Kind.RENEWED && leaseWatches.containsKey(election)) {
                toCheck.add(election);
              }
              if (!watchers.containsKey(election)) {
                return;
              }
              if (kind == LeaseNotice.Kind.RELEASED) {
                expiries.remove(election);
              } else {
                expiresAt(election, now + MILLISECONDS.toNanos(expiresInMillis));
              }
              if (kind != LeaseNotice.Kind.RENEWED) {
                runWatchers(election);
              }
            });
    if (!readable) {
      log.debug(
          "Unreadable notification on channel {}; running every watcher: {}", channel, payload);
      toLookUp.addAll(watchers.keySet());
      toCheck.addAll(leaseWatches.keySet());
      runAllWatchers();
    }
  }

  // ---- connection ----

  private void connect() throws SQLException {
    Connection c = connections.acquire();
    try {
      previousAutoCommit = c.getAutoCommit();
      previousNetworkTimeout = c.getNetworkTimeout();
      // LISTEN, the reads and the liveness check must not hang on a network that drops every
      // packet; getNotifications sets its own, shorter read timeout while it waits.
      c.setNetworkTimeout(Runnable::run, networkTimeoutMillis());
      c.setAutoCommit(true);
      c.unwrap(PGConnection.class); // fails early on a pool that hides the PostgreSQL connection
      try (Statement s = c.createStatement()) {
        s.setQueryTimeout(timeoutSeconds());
        // The channel is built from checked identifiers only (LeaseTable.channel).
        s.execute("LISTEN \"" + channel + "\"");
      }
      connection = c;
    } catch (SQLException | RuntimeException e) {
      releaseQuietly(c, e);
      throw e;
    }
  }

  private void disconnect() {
    Connection c = connection;
    connection = null;
    if (c == null) {
      return;
    }
    try {
      if (!c.isClosed()) {
        try (Statement s = c.createStatement()) {
          s.setQueryTimeout(timeoutSeconds());
          s.execute("UNLISTEN \"" + channel + "\"");
        }
        c.setAutoCommit(previousAutoCommit);
        c.setNetworkTimeout(Runnable::run, previousNetworkTimeout);
      }
    } catch (SQLException | RuntimeException e) {
      // A broken connection cannot unlisten; closing it ends the LISTEN on the server anyway.
      log.debug("UNLISTEN on channel {} failed; closing the connection", channel, e);
    } finally {
      releaseQuietly(c, null);
    }
  }

  private void releaseQuietly(Connection c, Throwable primary) {
    try {
      connections.release(c);
    } catch (RuntimeException e) {
      if (primary != null) {
        primary.addSuppressed(e);
      } else {
        log.warn("Returning the LISTEN connection of channel {} to its pool failed", channel, e);
      }
    }
  }

  private void pause(long millis) {
    synchronized (lifecycle) {
      try {
        if (running) {
          lifecycle.wait(Math.max(1, millis));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        running = false;
      }
    }
  }

  private int networkTimeoutMillis() {
    return (int) Math.min(Integer.MAX_VALUE, callTimeout.toMillis());
  }

  private int timeoutSeconds() {
    return (int) Math.max(1, (callTimeout.toMillis() + 999) / 1000);
  }

  // ---- watchers ----

  private void runWatchers(String election) {
    List<Runnable> list = watchers.get(election);
    if (list != null) {
      list.forEach(this::runContained);
    }
  }

  private void runAllWatchers() {
    watchers.values().forEach(list -> list.forEach(this::runContained));
  }

  private void runContained(Runnable watcher) {
    try {
      watcher.run();
    } catch (RuntimeException e) {
      log.warn("A watcher of PostgreSQL channel {} threw; the others still run", channel, e);
    }
  }

  @Override
  public void close() {
    Thread t;
    synchronized (lifecycle) {
      closed = true;
      running = false;
      lifecycle.notifyAll();
      t = thread;
    }
    watchers.clear();
    leaseWatches.clear();
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(POLL_MILLIS * 4L + callTimeout.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
