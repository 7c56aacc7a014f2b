package dev.baton.conformance.memory;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.InProcessFixture;
import dev.baton.conformance.LeaseStoreConformance;
import dev.baton.election.MemoryLeaseStore;
import java.time.Duration;

/**
 * The whole suite against the in-memory store, in a package of its own to prove that a backend
 * outside {@code dev.baton.conformance} needs nothing but this.
 */
class MemoryConformanceTest extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    MemoryLeaseStore store = new MemoryLeaseStore();
    return new InProcessFixture(node -> store, Duration.ofSeconds(1)) {
      @Override
      public boolean pushesLeaseLoss() {
        return true;
      }

      @Override
      public boolean canDeleteLeases() {
        return true;
      }

      @Override
      public void deleteLease(String election) {
        store.revoke(election);
      }
    };
  }
}
