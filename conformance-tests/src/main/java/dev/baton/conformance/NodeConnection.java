package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import dev.baton.election.LeaseStore;

/**
 * What a {@link ConformanceFixture} hands the suite for one simulated node: the node's own store,
 * and the switch that cuts that store's traffic (and only that store's) off from the server.
 *
 * @param store the node's store; the fixture closes it, the suite never does
 * @param faults cuts, blackholes and heals this node's traffic
 */
public record NodeConnection(LeaseStore store, FaultInjector faults) {

  public NodeConnection {
    requireNonNull(store, "store");
    requireNonNull(faults, "faults");
  }
}
