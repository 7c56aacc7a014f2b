package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.ref.WeakReference;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What the JVM's shutdown does to electors; the SIGTERM itself is tested across JVMs in
 * backend-jdbc's ShutdownReleaseIT.
 */
class ShutdownReleaseTest {

  @Test
  @DisplayName(
      "shutdown closes started electors and releases their leases, but not those that opted out")
  void shutdownClosesStartedElectors() {
    try (MemoryLeaseStore store = new MemoryLeaseStore()) {
      Elector a = Elector.builder(store).election("shutdown-a").candidate("a").build();
      Elector kept =
          Elector.builder(store)
              .election("shutdown-b")
              .candidate("b")
              .closeOnShutdown(false)
              .build();
      a.start();
      kept.start();
      await().until(() -> a.isLeader() && kept.isLeader());

      ShutdownRelease.closeAll();

      assertThat(a.isRunning()).isFalse();
      assertThat(store.read("shutdown-a")).isEmpty();
      assertThat(kept.isLeader()).isTrue();
      assertThat(store.read("shutdown-b")).map(LeaseRecord::holder).contains("b");
      kept.close();
    }
  }

  @Test
  @DisplayName("an elector closed by its owner is no longer held for the shutdown")
  void closedElectorIsLetGo() {
    try (MemoryLeaseStore store = new MemoryLeaseStore()) {
      Elector e =
          Elector.builder(store)
              .election("shutdown-c")
              .candidate("c")
              .retryPeriod(Duration.ofMillis(100))
              .build();
      e.start();
      await().until(e::isLeader);
      e.close();
      WeakReference<Elector> ref = new WeakReference<>(e);
      e = null;
      await()
          .until(
              () -> {
                System.gc();
                return ref.get() == null;
              });
    }
  }
}
