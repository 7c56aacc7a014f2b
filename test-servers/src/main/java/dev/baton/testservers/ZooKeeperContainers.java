package dev.baton.testservers;

import static org.awaitility.Awaitility.await;

import dev.baton.conformance.ServerPorts;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A ZooKeeper ensemble with one container per member, from the image {@value #IMAGE} names (the
 * official {@code zookeeper} image works, as does the one {@code scripts/docker-engine} builds from
 * Debian's package; both read the official image's {@code ZOO_*} variables). Each member binds its
 * own loopback ports; members can be killed and started again on them with their data, or paused.
 *
 * <p>Like the in-JVM ensemble, members grant session timeouts from one tick to 20 ticks and drop a
 * member that lags the quorum leader by 5 ticks.
 */
public final class ZooKeeperContainers implements ZooKeeperQuorum {

  /** The ZooKeeper image of the container mode. */
  public static final String IMAGE = "baton.image.zookeeper";

  private static final Duration QUORUM_PATIENCE = Duration.ofSeconds(90);

  private final int tickMillis;
  private final ContainerGroup members = new ContainerGroup();
  private final List<Integer> clientPorts;

  private ZooKeeperContainers(int tickMillis, List<Integer> clientPorts) {
    this.tickMillis = tickMillis;
    this.clientPorts = clientPorts;
  }

  /**
   * Starts {@code size} members ticking every {@code tickMillis} and returns once they form a
   * quorum.
   */
  public static ZooKeeperContainers start(int size, int tickMillis) {
    ServerContainer.requireEngine();
    String image = ServerContainer.image(IMAGE, "local/baton-zookeeper:3.8");
    List<Integer> clientPorts =
        IntStream.range(0, size).mapToObj(i -> ServerPorts.belowEphemeralRange()).toList();
    String servers =
        IntStream.range(0, size)
            .mapToObj(
                i ->
                    "server."
                        + (i + 1)
                        + "=127.0.0.1:"
                        + ServerPorts.belowEphemeralRange()
                        + ":"
                        + ServerPorts.belowEphemeralRange()
                        + ";"
                        + clientPorts.get(i))
            .collect(Collectors.joining(" "));
    ZooKeeperContainers ensemble = new ZooKeeperContainers(tickMillis, clientPorts);
    try {
      for (int i = 0; i < size; i++) {
        ensemble.members.add(
            ServerContainer.start(
                "ZooKeeper member " + (i + 1),
                image,
                Map.of(
                    "ZOO_MY_ID",
                    String.valueOf(i + 1),
                    "ZOO_SERVERS",
                    servers,
                    "ZOO_TICK_TIME",
                    String.valueOf(tickMillis),
                    "ZOO_INIT_LIMIT",
                    "20",
                    "ZOO_SYNC_LIMIT",
                    "5",
                    "ZOO_ADMINSERVER_ENABLED",
                    "false",
                    "ZOO_4LW_COMMANDS_WHITELIST",
                    "srvr",
                    "ZOO_CFG_EXTRA",
                    "minSessionTimeout=" + tickMillis + " maxSessionTimeout=" + 20 * tickMillis),
                List.of()));
      }
      ensemble.awaitQuorum();
      return ensemble;
    } catch (RuntimeException | Error e) {
      String logs = ensemble.members.logs();
      ensemble.close();
      throw new IllegalStateException(
          "cannot start a ZooKeeper ensemble of " + size + " from " + image + ":\n" + logs, e);
    }
  }

  /** The image every member's container runs, as the engine reports it. */
  public List<String> images() {
    return members.images();
  }

  @Override
  public Duration minSessionTimeout() {
    return Duration.ofMillis(tickMillis);
  }

  @Override
  public Duration maxSessionTimeout() {
    return Duration.ofMillis(20L * tickMillis);
  }

  /** Every member's client address, in member order. */
  @Override
  public List<InetSocketAddress> clientAddresses() {
    return clientPorts.stream().map(p -> new InetSocketAddress("127.0.0.1", p)).toList();
  }

  @Override
  public String connectString() {
    return clientPorts.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
  }

  /**
   * Kills member {@code index} (SIGKILL); its container and data stay for {@link #restart(int)}.
   */
  public void kill(int index) {
    members.kill(index);
  }

  public void restart(int index) {
    members.restart(index);
  }

  @Override
  public void killAll() {
    members.killAll();
  }

  /** Starts every killed member again with its data and waits for a quorum. */
  @Override
  public void restartAll() {
    members.restartKilled();
    awaitQuorum();
  }

  public void pause(int index) {
    members.pause(index);
  }

  public void unpause(int index) {
    members.unpause(index);
  }

  /**
   * Waits until exactly one member leads and every other one follows (or, alone, serves
   * standalone).
   */
  public void awaitQuorum() {
    await("until the ZooKeeper members form a quorum")
        .atMost(QUORUM_PATIENCE)
        .pollInterval(Duration.ofMillis(100))
        .until(
            this::modes,
            m ->
                m.size() == 1
                    ? m.get(0).equals("standalone")
                    : m.stream().filter("leader"::equals).count() == 1
                        && m.stream().filter("follower"::equals).count() == m.size() - 1);
  }

  /** Each member's role from ZooKeeper's {@code srvr} command, in member order. */
  public List<String> modes() {
    return clientAddresses().stream().map(ZooKeeperQuorum::memberMode).toList();
  }

  /** Removes every member's container. */
  @Override
  public void close() {
    members.close();
  }
}
