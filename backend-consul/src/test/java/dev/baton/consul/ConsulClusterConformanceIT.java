package dev.baton.consul;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;

/**
 * The whole conformance suite on a three-server Consul cluster on loopback, each node reaching all
 * three servers only through its own fault proxies.
 */
class ConsulClusterConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new ConsulConformanceFixture(3);
  }
}
