package dev.baton.testservers;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * An etcd cluster in the mode {@link ServerMode} chooses: member processes of the local {@code
 * etcd} binary ({@link EtcdCluster}) or containers ({@link EtcdContainers}). What every fixture
 * needs of either: the members' addresses, and killing and restarting all of them.
 */
public interface EtcdServers extends AutoCloseable {

  /**
   * Starts {@code size} members and returns once the cluster serves; fails in CI, and skips
   * elsewhere, when the mode's prerequisite (the etcd binary, a Docker engine) is missing.
   */
  static EtcdServers start(int size) {
    if (ServerMode.containers()) {
      return EtcdContainers.start(size);
    }
    EtcdCluster.requireBinary();
    return EtcdCluster.start(size);
  }

  /** Every member's client address, in member order. */
  List<InetSocketAddress> clientAddresses();

  /** Every member's client URL, in member order. */
  String[] endpoints();

  /** Kills every member (SIGKILL); their data stays for {@link #restartAll()}. */
  void killAll();

  /** Starts every killed member again on its ports and data, and waits until the cluster serves. */
  void restartAll();

  /** Stops every member and removes what they left behind. */
  @Override
  void close();
}
