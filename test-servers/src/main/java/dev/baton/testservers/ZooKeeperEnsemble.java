package dev.baton.testservers;

import static org.awaitility.Awaitility.await;

import dev.baton.conformance.ServerPorts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingZooKeeperServer;
import org.apache.zookeeper.util.ServiceUtils;

/**
 * A three-member ZooKeeper ensemble in this JVM on loopback (curator-test runs the server code
 * itself), whose members can be killed and restarted on the same ports with their data. The test's
 * classpath brings curator-test.
 *
 * <p>Members grant session timeouts from one tick to 20 ticks (curator-test sets minSessionTimeout
 * to the tick; ZooKeeper's default maximum is 20 ticks), and drop a member that lags the quorum
 * leader by 5 ticks (syncLimit).
 */
public final class ZooKeeperEnsemble implements ZooKeeperQuorum {

  private static final Duration QUORUM_PATIENCE = Duration.ofSeconds(30);

  private final int tickMillis;
  private final TestingCluster cluster;

  private ZooKeeperEnsemble(int tickMillis) {
    this.tickMillis = tickMillis;
    this.cluster =
        new TestingCluster(memberSpec(tickMillis), memberSpec(tickMillis), memberSpec(tickMillis));
  }

  static {
    // A member that cannot bind a port calls System.exit, which ends the whole test JVM and hides
    // which test it was in; logged instead, the test fails on its own wait and says what it was.
    ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
  }

  /**
   * A standalone server or ensemble member on loopback only, with ports below the ephemeral range
   * so that it can bind them again when it is restarted.
   */
  public static InstanceSpec memberSpec(int tickMillis) {
    return new InstanceSpec(
        null,
        ServerPorts.belowEphemeralRange(),
        ServerPorts.belowEphemeralRange(),
        ServerPorts.belowEphemeralRange(),
        true,
        -1,
        tickMillis,
        -1,
        Map.of("clientPortAddress", "127.0.0.1"),
        "127.0.0.1");
  }

  /** Starts three members and returns once one leads and two follow. */
  public static ZooKeeperEnsemble start(int tickMillis) {
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
  @Override
  public Duration maxSessionTimeout() {
    return Duration.ofMillis(20L * tickMillis);
  }

  /** The shortest session timeout the members grant. */
  @Override
  public Duration minSessionTimeout() {
    return Duration.ofMillis(tickMillis);
  }

  public TestingCluster cluster() {
    return cluster;
  }

  @Override
  public String connectString() {
    return cluster.getConnectString();
  }

  /** Every member's client address, in a fixed order. */
  @Override
  public List<InetSocketAddress> clientAddresses() {
    return cluster.getInstances().stream()
        .map(i -> new InetSocketAddress(i.getHostname(), i.getPort()))
        .toList();
  }

  /** Kills every member at once (their client connections drop); their data stays. */
  @Override
  public void killAll() {
    cluster.getServers().forEach(TestingZooKeeperServer::kill);
  }

  /** Restarts every member on its own ports with its data, and waits for a quorum. */
  @Override
  public void restartAll() throws Exception {
    for (TestingZooKeeperServer server : cluster.getServers()) {
      server.restart();
    }
    awaitQuorum();
  }

  public void kill(InstanceSpec member) throws Exception {
    if (!cluster.killServer(member)) {
      throw new IllegalArgumentException("no member " + member + " in " + modes());
    }
  }

  /** Waits until exactly one running member leads and every other running member follows it. */
  public void awaitQuorum() {
    await("until the ensemble has a leader and two followers")
        .atMost(QUORUM_PATIENCE)
        .pollInterval(Duration.ofMillis(100))
        .until(
            this::modes,
            m ->
                m.values().stream().filter("leader"::equals).count() == 1
                    && m.values().stream().filter("follower"::equals).count() == 2);
  }

  public Map<Integer, String> modes() {
    return cluster.getInstances().stream()
        .collect(Collectors.toMap(InstanceSpec::getPort, ZooKeeperEnsemble::mode));
  }

  /**
   * The member's role from ZooKeeper's {@code srvr} command: leader, follower, or down or unknown.
   */
  public static String mode(InstanceSpec member) {
    return ZooKeeperQuorum.memberMode(
        new InetSocketAddress(member.getHostname(), member.getPort()));
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
