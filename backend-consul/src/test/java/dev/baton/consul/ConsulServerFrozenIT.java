package dev.baton.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.net.HostAndPort;
import dev.baton.conformance.CloseAtEnd;
import dev.baton.conformance.FrozenServerScenario;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import dev.baton.testservers.ConsulServers;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.Consul;

/**
 * Fault 2 of issue 16 on Consul: a server frozen with SIGSTOP for longer than the lease while three
 * electors, each on its own client, run. The single server frozen is the whole store: the leader
 * must step down and nobody may be granted until the thaw. The Raft leader of a three-server
 * cluster frozen: the leader keeps its term through the others or steps down cleanly.
 */
class ConsulServerFrozenIT {

  private static final Timings TIMINGS = ConsulConformanceFixture.TIMINGS;

  private final CloseAtEnd closeAtEnd = new CloseAtEnd();

  @AfterEach
  void closeAll() throws Exception {
    closeAtEnd.close();
  }

  @Test
  void theSingleServerFrozenLongerThanTheLeaseCostsTheLeaderItsTermAndNothingElse() {
    ConsulServers consul = ConsulServers.start(1);
    closeAtEnd.add(consul);
    FrozenServerScenario scenario = electors(consul);

    FrozenServerScenario.Figures figures =
        scenario.freezeLongerThanTheLease(leader -> consul.freezable(consul.agent(0)), true);

    assertThat(figures.keptTheTerm()).isFalse();
  }

  @Test
  void theRaftLeaderFrozenLongerThanTheLeaseKeepsTheTermOrHandsOverCleanly() {
    ConsulServers consul = ConsulServers.start(3);
    closeAtEnd.add(consul);
    FrozenServerScenario scenario = electors(consul);

    scenario.freezeLongerThanTheLease(
        leader -> consul.freezable(consul.leader().orElseThrow()), false);
  }

  private FrozenServerScenario electors(ConsulServers consul) {
    List<HostAndPort> servers =
        consul.httpAddresses().stream()
            .map(a -> HostAndPort.fromParts("127.0.0.1", a.getPort()))
            .toList();
    List<LeaseStore> stores = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      Consul client =
          ConsulLeaseStoreProvider.client(servers, null, ConsulConformanceFixture.CALL_TIMEOUT);
      closeAtEnd.add(client::destroy);
      ConsulLeaseStore store =
          ConsulLeaseStore.builder(client)
              .callTimeout(ConsulConformanceFixture.CALL_TIMEOUT)
              .build();
      closeAtEnd.add(store);
      stores.add(store);
    }
    FrozenServerScenario scenario =
        new FrozenServerScenario("frozen-" + UUID.randomUUID(), TIMINGS, stores);
    closeAtEnd.add(scenario);
    return scenario;
  }
}
