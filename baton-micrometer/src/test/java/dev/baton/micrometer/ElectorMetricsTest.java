package dev.baton.micrometer;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FaultyLeaseStore;
import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MemoryLeaseStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.RequiredSearch;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The meters of real electors on a {@link MemoryLeaseStore}, read from a {@link
 * SimpleMeterRegistry}.
 */
class ElectorMetricsTest {

  final MeterRegistry registry = new SimpleMeterRegistry();
  final MemoryLeaseStore memory = new MemoryLeaseStore();
  final List<Elector> electors = new ArrayList<>();
  final String election = "metrics-" + System.nanoTime();

  @AfterEach
  void closeAll() {
    electors.forEach(Elector::close);
  }

  Elector elector(LeaseStore store, String candidate) {
    ElectorMetrics metrics =
        ElectorMetrics.builder(registry).backend("memory").clientGoStatus(true).build();
    Elector e =
        Elector.builder(store)
            .election(election)
            .candidate(candidate)
            .leaseDuration(Duration.ofSeconds(2))
            .renewDeadline(Duration.ofMillis(1200))
            .retryPeriod(Duration.ofMillis(200))
            .observer(metrics)
            .build();
    metrics.bindTo(e);
    electors.add(e);
    return e;
  }

  RequiredSearch meter(String name, String candidate) {
    return registry
        .get(name)
        .tag("election", election)
        .tag("candidate", candidate)
        .tag("backend", "memory");
  }

  double leader(String candidate) {
    return meter(ElectorMetrics.LEADER, candidate).gauge().value();
  }

  /** Starts a, waits until it leads, then b, until b follows it. */
  void aLeadsBFollows(Elector a, Elector b) {
    a.start();
    await().atMost(10, SECONDS).until(a::isLeader);
    b.start();
    await().atMost(10, SECONDS).until(() -> b.currentLeader().equals(Optional.of("a")));
  }

  @Test
  @DisplayName("the leader gauge, terms, renewals and the time since renewal follow a real elector")
  void leaderAndRenewals() {
    Elector a = elector(memory, "a");
    Elector b = elector(memory, "b");
    aLeadsBFollows(a, b);

    assertThat(leader("a")).isEqualTo(1.0);
    assertThat(leader("b")).isEqualTo(0.0);
    assertThat(registry.get(ElectorMetrics.CLIENT_GO_STATUS).tag("name", election).gauges())
        .extracting(g -> g.value())
        .containsExactlyInAnyOrder(1.0, 0.0);
    assertThat(meter(ElectorMetrics.TERMS, "a").counter().count()).isEqualTo(1.0);
    assertThat(meter(ElectorMetrics.TERMS, "b").counter().count()).isEqualTo(0.0);

    await()
        .atMost(10, SECONDS)
        .until(() -> meter(ElectorMetrics.RENEWAL, "a").timer().count() >= 2);
    assertThat(meter(ElectorMetrics.RENEWAL, "a").timer().totalTime(TimeUnit.NANOSECONDS))
        .isPositive();
    double since =
        meter(ElectorMetrics.SINCE_RENEWAL, "a").timeGauge().value(TimeUnit.MILLISECONDS);
    assertThat(since).isBetween(0.0, 1200.0);
    assertThat(meter(ElectorMetrics.SINCE_RENEWAL, "b").timeGauge().value(TimeUnit.MILLISECONDS))
        .isZero();
    // A first leader had no leader to wait for.
    assertThat(meter(ElectorMetrics.TAKEOVER, "a").timer().count()).isZero();
  }

  @Test
  @DisplayName("a step-down is counted by its reason and the successor's takeover is timed")
  void stepDownAndTakeover() {
    Elector a = elector(memory, "a");
    Elector b = elector(memory, "b");
    aLeadsBFollows(a, b);

    a.stepDown();
    await().atMost(10, SECONDS).until(b::isLeader);
    assertThat(
            meter(ElectorMetrics.STEP_DOWNS, "a").tag("reason", "stepped_down").counter().count())
        .isEqualTo(1.0);
    assertThat(meter(ElectorMetrics.TERMS, "b").counter().count()).isEqualTo(1.0);
    assertThat(meter(ElectorMetrics.TAKEOVER, "b").timer().count()).isEqualTo(1);
    assertThat(leader("a")).isEqualTo(0.0);
    assertThat(leader("b")).isEqualTo(1.0);

    b.close();
    assertThat(meter(ElectorMetrics.STEP_DOWNS, "b").tag("reason", "closed").counter().count())
        .isEqualTo(1.0);
    assertThat(meter(ElectorMetrics.SINCE_RENEWAL, "b").timeGauge().value(TimeUnit.MILLISECONDS))
        .isZero();
  }

  @Test
  @DisplayName(
      "failed renewals and failed campaigns are counted by the kind of error, and the deadline step-down by its reason")
  void storeErrors() {
    FaultyLeaseStore faulty = new FaultyLeaseStore(memory, Duration.ofMillis(300));
    Elector a = elector(faulty, "a");
    a.start();
    await().atMost(10, SECONDS).until(a::isLeader);

    faulty.cut();
    await().atMost(10, SECONDS).until(() -> !a.isLeader());
    await()
        .atMost(10, SECONDS)
        .until(
            () ->
                meter(ElectorMetrics.STEP_DOWNS, "a")
                        .tag("reason", "deadline_passed")
                        .counter()
                        .count()
                    == 1.0);
    assertThat(
            meter(ElectorMetrics.STORE_ERRORS, "a")
                .tag("operation", "renew")
                .tag("exception", "LeaseStoreException")
                .counter()
                .count())
        .isGreaterThanOrEqualTo(1.0);
    await()
        .atMost(10, SECONDS)
        .until(
            () ->
                registry
                        .find(ElectorMetrics.STORE_ERRORS)
                        .tag("candidate", "a")
                        .tag("operation", "acquire")
                        .counter()
                    != null);
    assertThat(
            meter(ElectorMetrics.STORE_ERRORS, "a")
                .tag("operation", "acquire")
                .tag("exception", "LeaseStoreException")
                .counter()
                .count())
        .isGreaterThanOrEqualTo(1.0);
  }

  @Test
  @DisplayName("a store error's kind is the class of what the store's generic wrapper wraps")
  void kinds() {
    assertThat(
            ElectorMetrics.kind(
                new LeaseStoreException(
                    "e", "lost", new SQLTransientConnectionException("refused"))))
        .isEqualTo("SQLTransientConnectionException");
    assertThat(ElectorMetrics.kind(new LeaseStoreException("e", "no answer")))
        .isEqualTo("LeaseStoreException");
    assertThat(ElectorMetrics.kind(new IllegalStateException("bug")))
        .isEqualTo("IllegalStateException");
  }

  @Test
  @DisplayName("close removes the elector's meters, and one instance binds to one elector")
  void closeAndBindOnce() {
    ElectorMetrics metrics = ElectorMetrics.builder(registry).build();
    Elector e = Elector.builder(memory).election(election).candidate("c").observer(metrics).build();
    metrics.bindTo(e);
    assertThat(
            registry
                .find(ElectorMetrics.LEADER)
                .tag("candidate", "c")
                .tag("backend", "unknown")
                .gauge())
        .isNotNull();
    assertThatThrownBy(() -> metrics.bindTo(e))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("one per elector");

    metrics.close();
    assertThat(registry.find(ElectorMetrics.LEADER).tag("candidate", "c").gauge()).isNull();
    assertThat(registry.find(ElectorMetrics.TERMS).tag("candidate", "c").counter()).isNull();
  }
}
