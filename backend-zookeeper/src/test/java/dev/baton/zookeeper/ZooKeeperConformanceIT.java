package dev.baton.zookeeper;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;

/**
 * The whole conformance suite on a three-member ensemble in this JVM, each simulated node reaching
 * every member through its own fault proxy; a server outage stops the whole ensemble.
 */
class ZooKeeperConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new ZooKeeperEnsembleFixture();
  }
}
