package dev.baton.spring.boot;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.election.ElectionListener;
import dev.baton.election.Term;
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
import org.springframework.core.annotation.Order;

/**
 * Several {@link TermWork} and {@link ElectionListener} beans behind the one elector: a bean that
 * fails, even with an {@link Error}, must not cost the others their stop or their onRevoked, since
 * the lease is released right after.
 */
class LeaderBeansTest {

  /** What the well-behaved beans were told, in order. */
  static final List<String> told = new CopyOnWriteArrayList<>();

  @SpringBootConfiguration
  @ImportAutoConfiguration(BatonAutoConfiguration.class)
  static class App {
    @Bean
    @Order(1)
    TermWork steadyWork() {
      return term -> {
        told.add("work started");
        return () -> told.add("work stopped");
      };
    }

    @Bean
    @Order(2)
    TermWork workThatFailsToStop() {
      // Stopped first (work stops in reverse order of starting).
      return term ->
          () -> {
            throw new AssertionError("a bug in the work's stop (planted)");
          };
    }

    @Bean
    @Order(1)
    ElectionListener listenerThatFails() {
      return new ElectionListener() {
        @Override
        public void onRevoked(Term term) {
          throw new IllegalStateException("a bug in onRevoked (planted)");
        }
      };
    }

    @Bean
    @Order(2)
    ElectionListener steadyListener() {
      return new ElectionListener() {
        @Override
        public void onElected(Term term) {
          told.add("elected");
        }

        @Override
        public void onRevoked(Term term) {
          told.add("revoked");
        }
      };
    }
  }

  @Test
  @DisplayName(
      "a work bean whose stop throws an Error, and a listener whose onRevoked throws, cost the other beans nothing")
  void aFailingBeanDoesNotCostTheOthersTheirStop() {
    told.clear();
    ConfigurableApplicationContext c =
        new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties(
                "election.backend=memory",
                "election.retry-period=200ms",
                "election.name=beans-" + System.nanoTime())
            .run();
    try {
      await().atMost(20, SECONDS).until(() -> told.contains("elected"));
    } finally {
      c.close();
    }

    assertThat(told)
        .as("what the well-behaved beans were told")
        .contains("work stopped", "revoked");
  }
}
