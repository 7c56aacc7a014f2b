package dev.baton.consul;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;

/**
 * The whole conformance suite on one Consul server (its data on disk, so the restart scenario finds
 * it again), each node behind its own fault proxy.
 */
class ConsulConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new ConsulConformanceFixture(1);
  }
}
