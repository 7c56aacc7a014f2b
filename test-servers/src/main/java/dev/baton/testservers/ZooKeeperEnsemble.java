package dev.baton.testservers;

import static org.awaitility.Awaitility.await;

import dev.baton.conformance.ServerPorts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
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

  private ZooKeeperEnsemble(int tickMillis, TestingCluster cluster) {
    this.tickMillis = tickMillis;
    this.cluster = cluster;
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
    return memberSpec(tickMillis, Map.of());
  }

  private static InstanceSpec memberSpec(int tickMillis, Map<String, Object> config) {
    Map<String, Object> properties = new HashMap<>(config);
    properties.put("clientPortAddress", "127.0.0.1");
    return new InstanceSpec(
        null,
        ServerPorts.belowEphemeralRange(),
        ServerPorts.belowEphemeralRange(),
        ServerPorts.belowEphemeralRange(),
        true,
        -1,
        tickMillis,
        -1,
        properties,
        "127.0.0.1");
  }

  /** Starts three members and returns once one leads and two follow. */
  public static ZooKeeperEnsemble start(int tickMillis) {
    return start(
        tickMillis,
        new TestingCluster(memberSpec(tickMillis), memberSpec(tickMillis), memberSpec(tickMillis)));
  }

  /**
   * Starts three members of which the first reaches the other two's quorum ports only at the
   * addresses {@code route} gives for them (proxies a test can cut), while its clients reach it
   * directly: cut, it goes on answering its clients from its own tree for up to {@code syncLimit}
   * ticks, while the other two go on as the quorum. The first is the first of {@code
   * cluster().getInstances()}; it has the lowest server id, so it follows (with equal histories the
   * highest id wins the first election), which is checked.
   */
  public static ZooKeeperEnsemble startWithFirstMemberRouted(
      int tickMillis, int syncLimit, UnaryOperator<InetSocketAddress> route) {
    Map<String, Object> config = Map.of("syncLimit", Integer.toString(syncLimit));
    List<InstanceSpec> members =
        List.of(
            memberSpec(tickMillis, config),
            memberSpec(tickMillis, config),
            memberSpec(tickMillis, config));
    List<InstanceSpec> firstMembersView = new ArrayList<>();
    firstMembersView.add(members.get(0));
    for (InstanceSpec other : members.subList(1, members.size())) {
      InetSocketAddress routed =
          route.apply(new InetSocketAddress(other.getHostname(), other.getQuorumPort()));
      firstMembersView.add(
          new InstanceSpec(
              other.getDataDirectory(),
              other.getPort(),
              other.getElectionPort(),
              routed.getPort(),
              false,
              other.getServerId(),
              other.getTickTime(),
              other.getMaxClientCnxns(),
              other.getCustomProperties(),
              routed.getHostString()));
    }
    Map<InstanceSpec, Collection<InstanceSpec>> views = new LinkedHashMap<>();
    views.put(members.get(0), firstMembersView);
    views.put(members.get(1), members);
    views.put(members.get(2), members);
    ZooKeeperEnsemble ensemble = start(tickMillis, new TestingCluster(views));
    InstanceSpec first = members.get(0);
    if (!"follower".equals(mode(first))) {
      ensemble.close();
      throw new IllegalStateException(
          "the routed member " + first.getPort() + " leads: " + ensemble.modes());
    }
    return ensemble;
  }

  private static ZooKeeperEnsemble start(int tickMillis, TestingCluster cluster) {
    ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(tickMillis, cluster);
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
