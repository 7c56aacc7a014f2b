package dev.baton.spring.boot;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FaultyLeaseStore;
import dev.baton.election.Elector;
import dev.baton.election.MemoryLeaseStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The health rule on real electors: following is healthy, a store failing longer than the lease is
 * not.
 */
class ElectionHealthIndicatorTest {

  final MemoryLeaseStore memory = new MemoryLeaseStore();
  final List<Elector> electors = new ArrayList<>();

  @AfterEach
  void closeAll() {
    electors.forEach(Elector::close);
  }

  ElectionHealthIndicator indicator(FaultyLeaseStore store, String candidate) {
    ElectionStatus status = new ElectionStatus();
    Elector e =
        Elector.builder(store)
            .election("health")
            .candidate(candidate)
            .leaseDuration(Duration.ofSeconds(2))
            .renewDeadline(Duration.ofMillis(1200))
            .retryPeriod(Duration.ofMillis(200))
            .observer(status.observer())
            .build();
    electors.add(e);
    e.start();
    return new ElectionHealthIndicator(e, status);
  }

  @Test
  @DisplayName(
      "leader and follower are up; a store failing for longer than the lease is down, and up again once it answers")
  void storeFailingLongerThanTheLease() {
    FaultyLeaseStore storeA = new FaultyLeaseStore(memory, Duration.ofMillis(300));
    FaultyLeaseStore storeB = new FaultyLeaseStore(memory, Duration.ofMillis(300));
    ElectionHealthIndicator a = indicator(storeA, "a");
    await().atMost(10, SECONDS).until(() -> electors.get(0).isLeader());
    ElectionHealthIndicator b = indicator(storeB, "b");
    await().atMost(10, SECONDS).until(() -> electors.get(1).currentLeader().isPresent());

    assertThat(a.health().getStatus()).isEqualTo(Status.UP);
    assertThat(a.health().getDetails()).containsEntry("leading", true);
    Health follower = b.health();
    assertThat(follower.getStatus()).isEqualTo(Status.UP);
    assertThat(follower.getDetails()).containsEntry("leading", false).containsEntry("leader", "a");

    storeB.cut();
    await().atMost(10, SECONDS).until(() -> b.health().getStatus().equals(Status.DOWN));
    assertThat(b.health().getDetails().get("reason").toString())
        .contains("the store has failed for")
        .contains("longer than the lease (2000 ms)");
    assertThat(b.health().getDetails()).containsKey("lastError");
    assertThat(a.health().getStatus()).isEqualTo(Status.UP);

    storeB.heal();
    storeA.cut();
    // a steps down at its deadline; b takes over once a's lease is gone and is up again.
    await().atMost(10, SECONDS).until(() -> electors.get(1).isLeader());
    assertThat(b.health().getStatus()).isEqualTo(Status.UP);
  }

  @Test
  @DisplayName("an elector that is not running is unknown")
  void notRunning() {
    ElectionHealthIndicator a =
        indicator(new FaultyLeaseStore(memory, Duration.ofMillis(300)), "a");
    electors.get(0).close();
    assertThat(a.health().getStatus()).isEqualTo(Status.UNKNOWN);
  }
}
