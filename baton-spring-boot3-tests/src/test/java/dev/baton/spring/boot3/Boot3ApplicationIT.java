package dev.baton.spring.boot3;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.RequiredServer;
import dev.baton.election.Elector;
import dev.baton.election.Term;
import dev.baton.micrometer.ElectorMetrics;
import dev.baton.spring.boot.WhileLeader;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The starter jar as published (compiled against Boot 4) in a Boot 3.5 web application, twice in
 * one JVM on PostgreSQL: the elector from properties on the application's DataSource, a {@link
 * WhileLeader} method on the leader only, the meters, Actuator's info over HTTP, and the handover
 * when the leader's context closes. Not the health contributor: it is built on Boot 4's health API.
 */
class Boot3ApplicationIT {

  static final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  final String election = "boot3-" + System.nanoTime();
  final List<ConfigurableApplicationContext> contexts = new CopyOnWriteArrayList<>();

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    LeaderLoop leaderLoop() {
      return new LeaderLoop();
    }
  }

  static final class LeaderLoop {
    final List<Term> started = new CopyOnWriteArrayList<>();
    final List<Term> returned = new CopyOnWriteArrayList<>();

    @WhileLeader
    void lead(Term term) {
      started.add(term);
      try {
        new CountDownLatch(1).await();
      } catch (InterruptedException e) {
        // the end of the term
      } finally {
        returned.add(term);
      }
    }

    boolean running() {
      return started.size() > returned.size();
    }
  }

  @BeforeAll
  static void postgres() {
    RequiredServer.requireTcp("PostgreSQL", "127.0.0.1", 5432, "pg_ctlcluster 15 main start");
  }

  @AfterEach
  void closeAll() {
    contexts.forEach(ConfigurableApplicationContext::close);
  }

  ConfigurableApplicationContext instance(String candidate) {
    ConfigurableApplicationContext c =
        new SpringApplicationBuilder(App.class)
            .properties(
                "server.port=0",
                "server.address=127.0.0.1",
                "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test",
                "spring.datasource.username=postgres",
                "election.name=" + election,
                "election.candidate-id=" + candidate,
                "election.lease-duration=4s",
                "election.renew-deadline=2s",
                "election.retry-period=500ms",
                "management.endpoints.web.exposure.include=info")
            .run();
    contexts.add(c);
    return c;
  }

  static String info(ConfigurableApplicationContext c) throws Exception {
    String url =
        "http://127.0.0.1:"
            + c.getEnvironment().getProperty("local.server.port")
            + "/actuator/info";
    HttpRequest get =
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build();
    HttpResponse<String> r = http.send(get, HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("GET /actuator/info: %s", r.body()).isEqualTo(200);
    return r.body();
  }

  @Test
  @DisplayName(
      "on Boot 3.5 one leads and runs its @WhileLeader method, the other follows; closing it hands over")
  void leadFollowAndHandOver() throws Exception {
    assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
    ConfigurableApplicationContext a = instance("a");
    LeaderLoop loopA = a.getBean(LeaderLoop.class);
    await().atMost(20, SECONDS).until(loopA::running);
    ConfigurableApplicationContext b = instance("b");
    LeaderLoop loopB = b.getBean(LeaderLoop.class);
    await()
        .atMost(20, SECONDS)
        .until(() -> b.getBean(Elector.class).currentLeader().orElse("").equals("a"));
    assertThat(loopB.started).isEmpty();
    assertThat(info(b)).contains("\"leader\":\"a\"").contains("\"name\":\"" + election + "\"");
    MeterRegistry registryA = a.getBean(MeterRegistry.class);
    assertThat(registryA.get(ElectorMetrics.LEADER).tag("candidate", "a").gauge().value())
        .isEqualTo(1.0);
    // The health contributor is compiled against Boot 4's health API, so on Boot 3 it is left out,
    // not broken.
    assertThat(a.getBeanNamesForType(HealthIndicator.class))
        .doesNotContain("electionHealthIndicator");

    a.close();
    assertThat(loopA.running())
        .as("a's method returned before its context finished closing")
        .isFalse();
    await().atMost(20, SECONDS).until(loopB::running);
    assertThat(loopB.started.get(0).token().isNewerThan(loopA.started.get(0).token())).isTrue();
    assertThat(info(b)).contains("\"leading\":true");
  }
}
