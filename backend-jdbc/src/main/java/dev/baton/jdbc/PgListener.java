package dev.baton.jdbc;

import dev.baton.election.Subscription;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jooq.ConnectionProvider;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL LISTEN on the lease table's channel, for every election of one store: one dedicated
 * connection and one daemon thread, started by the first watch. Releases and grants run {@code
 * pg_notify(channel, election)} in their own transaction, so a follower hears of them at commit.
 *
 * <p>When the connection breaks, the thread reconnects and then runs every watcher once, because
 * notifications sent in between are lost.
 */
final class PgListener implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PgListener.class);

  /** How long one wait for notifications blocks; also how quickly close() is noticed. */
  private static final int POLL_MILLIS = 250;

  /** How often an idle connection is checked, so that a silently dead one is replaced. */
  private static final long CHECK_EVERY_NANOS = Duration.ofSeconds(5).toNanos();

  private static final long RECONNECT_DELAY_MILLIS = 1000;

  private final ConnectionProvider connections;
  private final String channel;
  private final Duration callTimeout;
  private final Map<String, List<Runnable>> watchers = new ConcurrentHashMap<>();
  private final Object lifecycle = new Object();
  private Thread thread; // guarded by lifecycle
  private boolean closed; // guarded by lifecycle
  private volatile boolean running;

  /** Owned by the listener thread once it has started. */
  private Connection connection;

  private boolean previousAutoCommit;
  private int previousNetworkTimeout;

  PgListener(ConnectionProvider connections, String channel, Duration callTimeout) {
    this.connections = connections;
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
    start();
    return () -> watchers.computeIfPresent(election, (k, list) -> list.remove(changed) && list.isEmpty() ? null : list);
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
        log.warn("Cannot LISTEN on PostgreSQL channel {}; followers poll until it works: {}", channel, e.toString());
      }
      thread = new Thread(this::run, "baton-jdbc-listen-" + channel);
      thread.setDaemon(true);
      thread.start();
    }
  }

  private void run() {
    boolean broken = connection == null;
    long lastCheck = System.nanoTime();
    while (running) {
      try {
        if (connection == null) {
          connect();
          if (broken) {
            log.info("LISTEN on PostgreSQL channel {} works again", channel);
            broken = false;
          }
          lastCheck = System.nanoTime();
          notifyAllWatchers();
        }
        PGNotification[] notifications = connection.unwrap(PGConnection.class).getNotifications(POLL_MILLIS);
        if (notifications != null) {
          for (PGNotification n : notifications) {
            notifyWatchers(n.getParameter());
          }
        }
        if (System.nanoTime() - lastCheck > CHECK_EVERY_NANOS) {
          if (!connection.isValid(timeoutSeconds())) {
            throw new SQLException("the LISTEN connection stopped answering");
          }
          lastCheck = System.nanoTime();
        }
      } catch (SQLException | RuntimeException e) {
        if (!running) {
          break;
        }
        if (!broken) {
          log.warn("LISTEN on PostgreSQL channel {} failed; reconnecting, followers poll meanwhile", channel, e);
          broken = true;
        }
        disconnect();
        pause();
      }
    }
    disconnect();
  }

  private void connect() throws SQLException {
    Connection c = connections.acquire();
    try {
      previousAutoCommit = c.getAutoCommit();
      previousNetworkTimeout = c.getNetworkTimeout();
      // LISTEN and the liveness check must not hang on a network that drops every packet;
      // getNotifications sets its own, shorter read timeout while it waits.
      c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, callTimeout.toMillis()));
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

  private void pause() {
    synchronized (lifecycle) {
      try {
        if (running) {
          lifecycle.wait(RECONNECT_DELAY_MILLIS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        running = false;
      }
    }
  }

  private int timeoutSeconds() {
    return (int) Math.max(1, (callTimeout.toMillis() + 999) / 1000);
  }

  private void notifyWatchers(String election) {
    List<Runnable> list = watchers.get(election);
    if (list != null) {
      list.forEach(this::runContained);
    }
  }

  private void notifyAllWatchers() {
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
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(POLL_MILLIS * 4L + callTimeout.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
