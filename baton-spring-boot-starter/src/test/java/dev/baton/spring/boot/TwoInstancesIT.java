package dev.baton.spring.boot;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.RequiredServer;
import dev.baton.election.Elector;
import dev.baton.election.Term;
import dev.baton.election.TermWork;
import dev.baton.micrometer.ElectorMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real Spring Boot application, twice in one JVM, on PostgreSQL: each instance has its own
 * context, DataSource, web server on a random port, Actuator and Prometheus registry.
 */
class TwoInstancesIT {

  static final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  static final JsonMapper json = JsonMapper.builder().build();

  final String election = "spring-" + System.nanoTime();
  final List<ConfigurableApplicationContext> contexts = new CopyOnWriteArrayList<>();

  /** The application: a leader-only bean and a leader-only method, each recording when it runs. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    Runs runs() {
      return new Runs();
    }

    @Bean
    TermWork leaderOnlyWork(Runs runs) {
      return term -> {
        runs.started.add(term);
        return () -> runs.stopped.add(term);
      };
    }

    @Bean
    LeaderLoop leaderLoop() {
      return new LeaderLoop();
    }
  }

  /** A method that runs for the whole term, as a poller or a consumer loop would. */
  static final class LeaderLoop {
    final List<Term> started = new CopyOnWriteArrayList<>();
    final List<Term> returned = new CopyOnWriteArrayList<>();
    final List<Term> interrupted = new CopyOnWriteArrayList<>();
    volatile long firstStartNanos;
    volatile long lastReturnNanos;

    @WhileLeader
    void lead(Term term) {
      if (started.isEmpty()) {
        firstStartNanos = System.nanoTime();
      }
      started.add(term);
      try {
        new CountDownLatch(1).await();
      } catch (InterruptedException e) {
        interrupted.add(term);
        // The work's own clean-up after its interrupt (a flush, say): the lease must outlast it.
        LockSupport.parkNanos(Duration.ofMillis(300).toNanos());
      } finally {
        lastReturnNanos = System.nanoTime();
        returned.add(term);
      }
    }

    boolean running() {
      return started.size() > returned.size();
    }
  }

  static final class Runs {
    final List<Term> started = new CopyOnWriteArrayList<>();
    final List<Term> stopped = new CopyOnWriteArrayList<>();

    boolean running() {
      return started.size() > stopped.size();
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

  ConfigurableApplicationContext instance(String candidate, String... more) {
    ConfigurableApplicationContext c =
        new SpringApplicationBuilder(App.class)
            .properties(
                "server.port=0",
                "server.address=127.0.0.1",
                "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test",
                "spring.datasource.username=postgres",
                "election.backend=jdbc",
                "election.name=" + election,
                "election.candidate-id=" + candidate,
                "election.lease-duration=4s",
                "election.renew-deadline=2s",
                "election.retry-period=500ms",
                "election.metrics.client-go-status=true",
                "management.endpoints.web.exposure.include=health,info,prometheus,election",
                "management.endpoint.health.show-details=always")
            .properties(more)
            .run();
    contexts.add(c);
    return c;
  }

  static String url(ConfigurableApplicationContext c, String path) {
    return "http://127.0.0.1:" + c.getEnvironment().getProperty("local.server.port") + path;
  }

  static HttpResponse<String> get(ConfigurableApplicationContext c, String path)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(url(c, path)))
            .timeout(Duration.ofSeconds(10))
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> post(ConfigurableApplicationContext c, String path)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(url(c, path)))
            .timeout(Duration.ofSeconds(10))
            .POST(HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static JsonNode getJson(ConfigurableApplicationContext c, String path)
      throws IOException, InterruptedException {
    HttpResponse<String> r = get(c, path);
    assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
    return json.readTree(r.body());
  }

  @Test
  @DisplayName(
      "one instance leads and runs its leader-only bean and method, the other follows; closing it hands over")
  void leadFollowAndHandOver() throws Exception {
    ConfigurableApplicationContext a = instance("a");
    Runs runsA = a.getBean(Runs.class);
    await().atMost(20, SECONDS).until(runsA::running);
    ConfigurableApplicationContext b =
        instance("b", "management.endpoint.election.access=unrestricted");
    Runs runsB = b.getBean(Runs.class);
    await()
        .atMost(20, SECONDS)
        .until(() -> b.getBean(Elector.class).currentLeader().orElse("").equals("a"));
    assertThat(runsB.started).isEmpty();
    LeaderLoop loopA = a.getBean(LeaderLoop.class);
    LeaderLoop loopB = b.getBean(LeaderLoop.class);
    await().atMost(20, SECONDS).until(loopA::running);
    assertThat(loopA.started).containsExactlyElementsOf(runsA.started);
    assertThat(loopB.started).isEmpty();

    JsonNode healthA = getJson(a, "/actuator/health");
    assertThat(healthA.path("status").asString()).isEqualTo("UP");
    assertThat(
            healthA.path("components").path("election").path("details").path("leading").asBoolean())
        .isTrue();
    JsonNode healthB = getJson(b, "/actuator/health");
    assertThat(healthB.path("status").asString()).isEqualTo("UP");
    assertThat(
            healthB.path("components").path("election").path("details").path("leading").asBoolean())
        .isFalse();
    assertThat(
            healthB.path("components").path("election").path("details").path("leader").asString())
        .isEqualTo("a");

    JsonNode infoB = getJson(b, "/actuator/info").path("election");
    assertThat(infoB.path("name").asString()).isEqualTo(election);
    assertThat(infoB.path("leader").asString()).isEqualTo("a");
    // The last term: on a loaded machine a may miss its 2 s renew deadline once and be elected
    // again.
    assertThat(infoB.path("token").asLong())
        .isEqualTo(runsA.started.get(runsA.started.size() - 1).token().value());
    assertThat(infoB.path("lastRenewal").isMissingNode()).as("info: %s", infoB).isFalse();
    JsonNode infoA = getJson(a, "/actuator/info").path("election");
    assertThat(infoA.path("leading").asBoolean()).isTrue();
    assertThat(infoA.path("lastRenewal").isMissingNode()).as("info: %s", infoA).isFalse();

    // The meters are in the application's registry and at /actuator/prometheus.
    MeterRegistry registryA = a.getBean(MeterRegistry.class);
    assertThat(
            registryA
                .get(ElectorMetrics.LEADER)
                .tag("election", election)
                .tag("candidate", "a")
                .tag("backend", "jdbc")
                .gauge()
                .value())
        .isEqualTo(1.0);
    String prometheusA = get(a, "/actuator/prometheus").body();
    assertThat(prometheusA)
        .containsPattern("baton_election_leader\\{[^}]*candidate=\"a\"[^}]*\\} 1\\.0");
    assertThat(prometheusA)
        .containsPattern(
            "leader_election_master_status\\{[^}]*name=\"" + election + "\"[^}]*\\} 1\\.0");
    assertThat(prometheusA).contains("baton_election_terms_total{");
    await()
        .atMost(20, SECONDS)
        .until(
            () ->
                get(a, "/actuator/prometheus")
                    .body()
                    .matches("(?s).*baton_election_renewal_seconds_count\\{[^}]*\\} [1-9].*"));

    // Stepping down is a write operation: refused unless its access is unrestricted (it is not on
    // a).
    assertThat(post(a, "/actuator/election").statusCode()).isGreaterThanOrEqualTo(400);
    assertThat(a.getBean(Elector.class).isLeader()).isTrue();

    a.close();
    assertThat(runsA.running())
        .as("a's work stopped before its context finished closing")
        .isFalse();
    assertThat(loopA.interrupted)
        .as("a's method interrupted at the end of its term")
        .containsExactlyElementsOf(loopA.started);
    assertThat(loopA.running())
        .as("a's method returned before its context finished closing")
        .isFalse();
    await().atMost(20, SECONDS).until(runsB::running);
    await().atMost(20, SECONDS).until(loopB::running);
    assertThat(loopB.started).containsExactlyElementsOf(runsB.started);
    assertThat(loopB.firstStartNanos)
        .as("b's method started only after a's had returned (a's lease released after it)")
        .isGreaterThan(loopA.lastReturnNanos);
    assertThat(runsB.started.get(0).token().isNewerThan(runsA.started.get(0).token())).isTrue();
    MeterRegistry registryB = b.getBean(MeterRegistry.class);
    assertThat(registryB.get(ElectorMetrics.TAKEOVER).tag("candidate", "b").timer().count())
        .isEqualTo(1);
    assertThat(
            getJson(b, "/actuator/health")
                .path("components")
                .path("election")
                .path("details")
                .path("leading")
                .asBoolean())
        .isTrue();

    // On b the write operation is enabled: it steps down, and with nobody else it leads again
    // later.
    HttpResponse<String> stepDown = post(b, "/actuator/election");
    assertThat(stepDown.statusCode()).as(stepDown.body()).isEqualTo(200);
    assertThat(json.readTree(stepDown.body()).path("steppedDown").asBoolean()).isTrue();
    await()
        .atMost(20, SECONDS)
        .until(
            () ->
                registryB
                        .get(ElectorMetrics.STEP_DOWNS)
                        .tag("reason", "stepped_down")
                        .counter()
                        .count()
                    == 1.0);
    await().atMost(20, SECONDS).until(() -> runsB.started.size() == 2 && runsB.running());
    await().atMost(20, SECONDS).until(() -> loopB.started.size() == 2 && loopB.running());
    assertThat(loopB.interrupted).containsExactly(loopB.started.get(0));
  }
}
