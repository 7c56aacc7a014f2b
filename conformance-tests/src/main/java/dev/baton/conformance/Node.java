package dev.baton.conformance;

import dev.baton.election.LeaseStore;

/** A simulated node: its recorded store, its fault switch, and an executor the suite can stall. */
final class Node {

  private final String name;
  private final RecordingLeaseStore store;
  private final FaultInjector faults;
  private PausableExecutor executor;

  Node(String name, NodeConnection connection, History history) {
    this.name = name;
    this.store = new RecordingLeaseStore(name, connection.store(), history);
    this.faults = connection.faults();
  }

  String name() {
    return name;
  }

  /** The store every elector and direct call of this node goes through. */
  RecordingLeaseStore store() {
    return store;
  }

  /** The fixture's store itself, unrecorded. */
  LeaseStore rawStore() {
    return store.delegate();
  }

  FaultInjector faults() {
    return faults;
  }

  /**
   * This node's own executor, with its timer, for electors the suite wants to stall; created on
   * first use.
   */
  synchronized PausableExecutor executor() {
    if (executor == null) {
      executor = new PausableExecutor("conformance-" + name);
    }
    return executor;
  }

  synchronized void resumeAndHeal() {
    faults.heal();
    if (executor != null) {
      executor.resume();
    }
  }

  synchronized void close() {
    if (executor != null) {
      executor.close();
      executor = null;
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
