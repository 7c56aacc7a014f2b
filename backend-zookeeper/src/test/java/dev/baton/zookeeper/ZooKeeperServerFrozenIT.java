package dev.baton.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.CloseAtEnd;
import dev.baton.conformance.FrozenServerScenario;
import dev.baton.conformance.ServerPorts;
import dev.baton.conformance.ServerProcess;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fault 2 of issue 16 on ZooKeeper: a server, run as a child process, frozen with SIGSTOP for
 * longer than the lease (and the session) while three electors, each on its own client, run. The
 * standalone server frozen is the whole store: the leader must step down and nobody may be granted
 * until the thaw. The ensemble member the leader's client is connected to frozen: the leader keeps
 * its term through another member or steps down cleanly. Either way one elector leads after the
 * thaw, none restarted, and the history check holds.
 */
class ZooKeeperServerFrozenIT {

  private static final int TICK_MILLIS = 200;

  /** The session timeout is the lease: within the servers' bounds of 0.2 to 4 s. */
  private static final Timings TIMINGS = Timings.SHORT;

  private static final Duration CALL_TIMEOUT = Duration.ofMillis(700);
  private static final Pattern REMOTE_PORT = Pattern.compile("remoteserver:[^ ]*:(\\d+)");

  @TempDir Path dir;

  private final CloseAtEnd closeAtEnd = new CloseAtEnd();
  private final Map<String, CuratorFramework> clients = new HashMap<>();

  @AfterEach
  void closeAll() throws Exception {
    closeAtEnd.close();
  }

  @Test
  void theStandaloneServerFrozenLongerThanTheLeaseCostsTheLeaderItsTermAndNothingElse() {
    Map<Integer, ServerProcess> servers = start(1);
    ServerProcess server = servers.values().iterator().next();
    FrozenServerScenario scenario = electors(servers.keySet());

    FrozenServerScenario.Figures figures =
        scenario.freezeLongerThanTheLease(leader -> server, true);

    assertThat(figures.keptTheTerm()).isFalse();
  }

  @Test
  void theMemberTheLeadersClientIsOnFrozenLongerThanTheLeaseKeepsTheTermOrHandsOverCleanly() {
    Map<Integer, ServerProcess> members = start(3);
    FrozenServerScenario scenario = electors(members.keySet());

    scenario.freezeLongerThanTheLease(leader -> members.get(connectedPort(leader)), false);
  }

  /** Servers on loopback ports below the ephemeral range, by client port. */
  private Map<Integer, ServerProcess> start(int count) {
    List<String> ports = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ports.add(
          ServerPorts.belowEphemeralRange()
              + ":"
              + ServerPorts.belowEphemeralRange()
              + ":"
              + ServerPorts.belowEphemeralRange());
    }
    Map<Integer, ServerProcess> started = new HashMap<>();
    for (int i = 0; i < count; i++) {
      int clientPort = Integer.parseInt(ports.get(i).split(":")[0]);
      List<String> args =
          new ArrayList<>(
              List.of(Integer.toString(TICK_MILLIS), dir.toString(), Integer.toString(i)));
      args.addAll(ports);
      ServerProcess p =
          ServerProcess.start(
              "ZooKeeper " + (count == 1 ? "server" : "member " + (i + 1)),
              dir.resolve("zookeeper-" + (i + 1) + ".log"),
              List.of(),
              ZooKeeperChild.class.getName(),
              args,
              clientPort);
      closeAtEnd.add(p);
      started.put(clientPort, p);
    }
    return started;
  }

  private FrozenServerScenario electors(Set<Integer> clientPorts) {
    String connect =
        clientPorts.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    List<LeaseStore> stores = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      CuratorFramework client = ZooKeeperServers.pinnedClient(connect, TIMINGS.leaseDuration());
      client.start();
      closeAtEnd.add(client);
      clients.put("node-" + i, client);
      ZooKeeperLeaseStore store =
          ZooKeeperLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
      closeAtEnd.add(store);
      stores.add(store);
    }
    FrozenServerScenario scenario =
        new FrozenServerScenario(ZooKeeperServers.uniqueElection("frozen"), TIMINGS, stores);
    closeAtEnd.add(scenario);
    return scenario;
  }

  /**
   * The client port of the member {@code node}'s client is connected to, from the client's own
   * description.
   */
  private int connectedPort(String node) {
    try {
      String described = clients.get(node).getZookeeperClient().getZooKeeper().toString();
      Matcher m = REMOTE_PORT.matcher(described);
      if (!m.find()) {
        throw new IllegalStateException("no remote server in " + described);
      }
      return Integer.parseInt(m.group(1));
    } catch (Exception e) {
      throw new IllegalStateException("cannot tell which member " + node + " is connected to", e);
    }
  }
}
