package dev.baton.testservers;

import static java.nio.charset.StandardCharsets.US_ASCII;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;

/**
 * A three-member ZooKeeper ensemble in the mode {@link ServerMode} chooses: in this JVM ({@link
 * ZooKeeperEnsemble}, curator-test) or in containers ({@link ZooKeeperContainers}). What every
 * fixture needs of either: the members' addresses, the session timeouts they grant, and killing and
 * restarting all of them.
 */
public interface ZooKeeperQuorum extends AutoCloseable {

  /**
   * Starts three members ticking every {@code tickMillis} and returns once they form a quorum; in
   * container mode, fails in CI (skips elsewhere) when no Docker engine answers.
   */
  static ZooKeeperQuorum start(int tickMillis) {
    return ServerMode.containers()
        ? ZooKeeperContainers.start(3, tickMillis)
        : ZooKeeperEnsemble.start(tickMillis);
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

  /**
   * The role of the member at {@code client} from ZooKeeper's {@code srvr} command: leader,
   * follower, standalone, or down or unknown.
   */
  static String memberMode(InetSocketAddress client) {
    try (Socket socket = new Socket()) {
      socket.connect(client, 2_000);
      socket.setSoTimeout(2_000);
      OutputStream out = socket.getOutputStream();
      out.write("srvr".getBytes(US_ASCII));
      out.flush();
      String answer = new String(socket.getInputStream().readAllBytes(), US_ASCII);
      return answer
          .lines()
          .filter(l -> l.startsWith("Mode: "))
          .map(l -> l.substring(6).trim())
          .findFirst()
          .orElse("unknown");
    } catch (IOException e) {
      // A member that is down or still starting has no role yet; callers wait for one.
      return "down (" + e.getClass().getSimpleName() + ")";
    }
  }
}
