package dev.baton.zookeeper;

import dev.baton.testservers.ZooKeeperEnsemble;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.util.ServiceUtils;

/**
 * Real ZooKeeper servers in this JVM (curator-test runs the server code itself) and Curator clients
 * for them, all closed by {@link #close()}.
 *
 * <p>The servers tick every 200 ms, so they accept session timeouts from 200 ms to 4 s and an
 * abandoned session expires within a few seconds.
 */
final class ZooKeeperServers implements AutoCloseable {

  static final int TICK_MILLIS = 200;

  /** The longest session timeout the servers grant: 20 ticks. */
  static final Duration MAX_SESSION = Duration.ofMillis(20L * TICK_MILLIS);

  private final List<AutoCloseable> opened = new ArrayList<>();

  /** A standalone server, listening on loopback only. */
  TestingServer server() {
    try {
      TestingServer server = new TestingServer(spec(), true);
      opened.add(server);
      return server;
    } catch (Exception e) {
      throw new IllegalStateException("cannot start an in-JVM ZooKeeper server", e);
    }
  }

  static {
    // A member that cannot bind a port calls System.exit, which ends the whole test JVM and hides
    // which test it was in; logged instead, the test fails on its own wait and says what it was.
    ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
  }

  static InstanceSpec spec() {
    return spec(TICK_MILLIS);
  }

  /**
   * A standalone server or ensemble member on loopback only, with ports it can bind again when it
   * is restarted.
   */
  static InstanceSpec spec(int tickMillis) {
    return ZooKeeperEnsemble.memberSpec(tickMillis);
  }

  /** A started client with the given session timeout, closed with the servers. */
  CuratorFramework client(String connectString, Duration sessionTimeout) {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs((int) sessionTimeout.toMillis())
            .connectionTimeoutMs((int) Math.min(5_000, sessionTimeout.toMillis()))
            .retryPolicy(new RetryOneTime(100))
            .build();
    return started(client);
  }

  /**
   * A client, not started, of exactly the servers in {@code connectString}: Curator would otherwise
   * replace them with the members' own addresses from the ensemble's config node, and bypass a
   * proxy or reach a member the test keeps it away from.
   */
  static CuratorFramework pinnedClient(String connectString, Duration sessionTimeout) {
    return CuratorFrameworkFactory.builder()
        .connectString(connectString)
        .sessionTimeoutMs((int) sessionTimeout.toMillis())
        .connectionTimeoutMs((int) sessionTimeout.toMillis())
        .retryPolicy(new RetryOneTime(100))
        .ensembleTracker(false)
        .build();
  }

  /** Starts {@code client} and closes it with the servers. */
  CuratorFramework started(CuratorFramework client) {
    client.start();
    opened.add(client);
    return client;
  }

  void closeLater(AutoCloseable closeable) {
    opened.add(closeable);
  }

  static String uniqueElection(String purpose) {
    return purpose + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Clients first, then servers: in the reverse order of opening. */
  @Override
  public void close() {
    List<Exception> failures = new ArrayList<>();
    for (int i = opened.size() - 1; i >= 0; i--) {
      try {
        opened.get(i).close();
      } catch (Exception e) {
        failures.add(e);
      }
    }
    opened.clear();
    if (!failures.isEmpty()) {
      UncheckedIOException failure =
          new UncheckedIOException(new IOException("closing ZooKeeper test resources failed"));
      failures.forEach(failure::addSuppressed);
      throw failure;
    }
  }
}
