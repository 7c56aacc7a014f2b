package dev.baton.benchmarks;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.zookeeper.server.ServerCnxn;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * A standalone ZooKeeper server in this JVM (the real server code, as curator-test's TestingServer
 * runs it), on loopback, with the per-connection statistics the idle measurement reads: packets a
 * session sent to the server.
 *
 * <p>ZooKeeper judges session expiry on tick boundaries and grants session timeouts between 2 and
 * 20 ticks by default; with the common {@code tickTime=2000} a 3 s session cannot be had at all.
 * The benchmark ticks every {@value #TICK_MILLIS} ms and allows sessions up to 60 s.
 */
final class ZooKeeperServerInJvm implements AutoCloseable {

  static final int TICK_MILLIS = 100;

  private final Path dir;
  private final ZooKeeperServer server;
  private final ServerCnxnFactory connections;

  private ZooKeeperServerInJvm(Path dir, ZooKeeperServer server, ServerCnxnFactory connections) {
    this.dir = dir;
    this.server = server;
    this.connections = connections;
  }

  static ZooKeeperServerInJvm start() {
    Path dir;
    try {
      dir = Files.createTempDirectory("baton-bench-zk-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      File data = dir.toFile();
      ZooKeeperServer server = new ZooKeeperServer(data, data, TICK_MILLIS);
      server.setMinSessionTimeout(2 * TICK_MILLIS);
      server.setMaxSessionTimeout(60_000);
      ServerCnxnFactory factory =
          ServerCnxnFactory.createFactory(
              new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 10_000);
      factory.startup(server);
      return new ZooKeeperServerInJvm(dir, server, factory);
    } catch (IOException e) {
      Files2.deleteTree(dir);
      throw new UncheckedIOException("cannot start ZooKeeper in this JVM", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      Files2.deleteTree(dir);
      throw new IllegalStateException("interrupted while starting ZooKeeper", e);
    }
  }

  InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), connections.getLocalPort());
  }

  /**
   * Packets (requests and pings) the server received from {@code sessionId} on its live connection.
   */
  long packetsReceivedFrom(long sessionId) {
    long n = 0;
    for (ServerCnxn c : connections.getConnections()) {
      if (c.getSessionId() == sessionId) {
        n += c.getPacketsReceived();
      }
    }
    return n;
  }

  /** Packets the server received from anyone since it started. */
  long packetsReceived() {
    return server.serverStats().getPacketsReceived();
  }

  String version() {
    return org.apache.zookeeper.Version.getFullVersion()
        .replaceAll(",.*", "")
        .replaceAll("-.*", "");
  }

  @Override
  public void close() {
    try {
      connections.shutdown();
      server.shutdown();
    } finally {
      Files2.deleteTree(dir);
    }
  }
}
