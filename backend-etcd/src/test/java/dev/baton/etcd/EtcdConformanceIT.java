package dev.baton.etcd;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;

/**
 * The whole conformance suite on a real three-member etcd cluster, each node behind its own fault
 * proxies.
 */
class EtcdConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new EtcdConformanceFixture();
  }
}
