package dev.baton.testservers;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * A three-member ZooKeeper ensemble in the mode {@link ServerMode} chooses: in this JVM
 * ({@link ZooKeeperEnsemble}, curator-test) or in containers ({@link ZooKeeperContainers}). What
 * every fixture needs of either: the members' addresses, the session timeouts they grant, and
 * killing and restarting all of them.
 */
public interface ZooKeeperQuorum extends AutoCloseable {

  /**
   * Starts three members ticking every {@code tickMillis} and returns once they form a quorum;
   * in container mode, fails in CI (skips elsewhere) when no Docker engine answers.
   */
  static ZooKeeperQuorum start(int tickMillis) {
    return ServerMode.containers() ? ZooKeeperContainers.start(3, tickMillis) : ZooKeeperEnsemble.start(tickMillis);
  }

  /** Every member's client address, in member order. */
  List<InetSocketAddress> clientAddresses();

  /** Every member's client address as a ZooKeeper connect string. */
  String connectString();

  /** The shortest session timeout the members grant. */
  Duration minSessionTimeout();

  /** The longest session timeout the members grant. */
  Duration maxSessionTimeout();

  /** Kills every member at once (their client connections drop); their data stays. */
  void killAll();

  /** Restarts every member on its own ports with its data, and waits for a quorum. */
  void restartAll() throws Exception;

  @Override
  void close();
}
