package dev.baton.zookeeper;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingZooKeeperServer;

/**
 * A three-member ZooKeeper ensemble in this JVM on loopback, whose members can be killed and
 * restarted on the same ports with their data.
 *
 * <p>Members grant session timeouts from one tick to 20 ticks (curator-test sets
 * minSessionTimeout to the tick; ZooKeeper's default maximum is 20 ticks), and drop a member that
 * lags the quorum leader by 5 ticks (syncLimit).
 */
final class ZooKeeperEnsemble implements AutoCloseable {

  private static final Duration QUORUM_PATIENCE = Duration.ofSeconds(30);

  private final int tickMillis;
  private final TestingCluster cluster;

  private ZooKeeperEnsemble(int tickMillis) {
    this.tickMillis = tickMillis;
    this.cluster = new TestingCluster(ZooKeeperServers.spec(tickMillis), ZooKeeperServers.spec(tickMillis), ZooKeeperServers.spec(tickMillis));
  }

  /** Starts three members and returns once one leads and two follow. */
  static ZooKeeperEnsemble start(int tickMillis) {
    ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(tickMillis);
    try {
      ensemble.cluster.start();
      ensemble.awaitQuorum();
      return ensemble;
    } catch (Exception | AssertionError e) {
      ensemble.close();
      throw new IllegalStateException("cannot start a three-member ZooKeeper ensemble", e);
    }
  }

  /** The longest session timeout the members grant. */
  Duration maxSessionTimeout() {
    return Duration.ofMillis(20L * tickMillis);
  }

  /** The shortest session timeout the members grant. */
  Duration minSessionTimeout() {
    return Duration.ofMillis(tickMillis);
  }

  TestingCluster cluster() {
    return cluster;
  }

  String connectString() {
    return cluster.getConnectString();
  }

  /** Every member's client address, in a fixed order. */
  List<InetSocketAddress> clientAddresses() {
    return cluster.getInstances().stream().map(i -> new InetSocketAddress(i.getHostname(), i.getPort())).toList();
  }

  /** Kills every member at once (their client connections drop); their data stays. */
  void killAll() {
    cluster.getServers().forEach(TestingZooKeeperServer::kill);
  }

  /** Restarts every member on its own ports with its data, and waits for a quorum. */
  void restartAll() throws Exception {
    for (TestingZooKeeperServer server : cluster.getServers()) {
      server.restart();
    }
    awaitQuorum();
  }

  void kill(InstanceSpec member) throws Exception {
    if (!cluster.killServer(member)) {
      throw new IllegalArgumentException("no member " + member + " in " + modes());
    }
  }

  /** Waits until exactly one running member leads and every other running member follows it. */
  void awaitQuorum() {
    await("until the ensemble has a leader and two followers")
        .atMost(QUORUM_PATIENCE)
        .pollInterval(Duration.ofMillis(100))
        .until(this::modes, m -> m.values().stream().filter("leader"::equals).count() == 1 && m.values().stream().filter("follower"::equals).count() == 2);
  }

  Map<Integer, String> modes() {
    return cluster.getInstances().stream().collect(Collectors.toMap(InstanceSpec::getPort, ZooKeeperEnsemble::mode));
  }

  /** The member's role from ZooKeeper's {@code srvr} command: leader, follower, or down or unknown. */
  static String mode(InstanceSpec member) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(member.getHostname(), member.getPort()), 2_000);
      socket.setSoTimeout(2_000);
      OutputStream out = socket.getOutputStream();
      out.write("srvr".getBytes(US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String answer = new String(in.readAllBytes(), US_ASCII);
      Optional<String> mode = answer.lines().filter(l -> l.startsWith("Mode: ")).map(l -> l.substring(6).trim()).findFirst();
      return mode.orElse("unknown");
    } catch (IOException e) {
      // A member that is down or still starting has no role yet; callers wait for one.
      return "down (" + e.getClass().getSimpleName() + ")";
    }
  }

  @Override
  public void close() {
    try {
      cluster.close();
    } catch (IOException e) {
      throw new IllegalStateException("cannot close the ZooKeeper ensemble", e);
    }
  }
}
