package dev.baton.spring.boot;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.ServerPorts;
import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * With no connect-string, the store runs on the application's own CuratorFramework and leaves it
 * open.
 */
class ApplicationCuratorTest {

  static TestingServer server;

  @BeforeAll
  static void startServer() throws Exception {
    InstanceSpec spec =
        new InstanceSpec(
            null,
            ServerPorts.belowEphemeralRange(),
            ServerPorts.belowEphemeralRange(),
            ServerPorts.belowEphemeralRange(),
            true,
            -1,
            200,
            -1,
            Map.of("clientPortAddress", "127.0.0.1"),
            "127.0.0.1");
    server = new TestingServer(spec, true);
  }

  @AfterAll
  static void stopServer() throws Exception {
    server.close();
  }

  @SpringBootConfiguration
  @ImportAutoConfiguration(BatonAutoConfiguration.class)
  static class App {
    @Bean(destroyMethod = "close")
    CuratorFramework curator() {
      CuratorFramework c =
          CuratorFrameworkFactory.builder()
              .connectString(server.getConnectString())
              .sessionTimeoutMs(4000)
              .connectionTimeoutMs(4000)
              .retryPolicy(new RetryOneTime(100))
              .build();
      c.start();
      return c;
    }
  }

  @Test
  @DisplayName(
      "election.backend=zookeeper without a connect-string leads on the application's client")
  void usesTheApplicationsClient() {
    ConfigurableApplicationContext c =
        new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties(
                "election.backend=zookeeper",
                "election.name=curator-" + System.nanoTime(),
                "election.zookeeper.call-timeout=1s",
                // ZooKeeper leases last a session: the lease matches the client's session timeout.
                "election.lease-duration=4s",
                "election.renew-deadline=2500ms",
                "election.retry-period=500ms")
            .run();
    CuratorFramework curator = c.getBean(CuratorFramework.class);
    try {
      assertThat(c.getBean(LeaseStore.class).describe())
          .startsWith("zookeeper (")
          .contains(server.getConnectString());
      Elector elector = c.getBean(Elector.class);
      await().atMost(20, SECONDS).until(elector::isLeader);
      c.getBean(LeaseStore.class).close();
      assertThat(curator.getState())
          .as("the store never closes a client it was given")
          .isEqualTo(CuratorFrameworkState.STARTED);
    } finally {
      c.close();
    }
    assertThat(curator.getState()).isEqualTo(CuratorFrameworkState.STOPPED);
  }
}
