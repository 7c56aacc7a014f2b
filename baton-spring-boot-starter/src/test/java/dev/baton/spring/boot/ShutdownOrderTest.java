package dev.baton.spring.boot;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.MemoryLeaseStore;
import dev.baton.election.TermWork;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * What docs/spring-boot.md promises of a closing context: the work stops, then the lease is
 * released, and only then is the store closed (a store closed first would give the lease up under a
 * leader).
 */
class ShutdownOrderTest {

  static final List<String> seen = new CopyOnWriteArrayList<>();

  @SpringBootConfiguration
  @ImportAutoConfiguration(BatonAutoConfiguration.class)
  static class App {
    @Bean
    LeaseStore store() {
      return new ForwardingLeaseStore(new MemoryLeaseStore()) {
        @Override
        public void release(Lease lease) {
          seen.add("released");
          super.release(lease);
        }

        @Override
        public void close() {
          seen.add("store closed");
          super.close();
        }
      };
    }

    @Bean
    TermWork work() {
      return term -> {
        seen.add("work started");
        return () -> seen.add("work stopped");
      };
    }
  }

  @Test
  @DisplayName("closing the context stops the work, releases the lease, then closes the store")
  void theStoreClosesAfterTheElectorReleased() {
    seen.clear();
    ConfigurableApplicationContext c =
        new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties("election.retry-period=200ms", "election.name=order-" + System.nanoTime())
            .run();
    try {
      await().atMost(20, SECONDS).until(() -> seen.contains("work started"));
    } finally {
      c.close();
    }

    assertThat(seen).containsExactly("work started", "work stopped", "released", "store closed");
  }
}
