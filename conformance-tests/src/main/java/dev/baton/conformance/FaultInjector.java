package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * Cuts one simulated node off from the server and heals it. A {@link FaultProxy} does it on the
 * network; a {@link FaultyLeaseStore} does it for stores that have no network to cut.
 */
public interface FaultInjector {

  /**
   * Like a crashed peer or a pulled cable: open connections are closed and new ones refused; calls
   * fail at once.
   */
  void cut();

  /**
   * Like a partition: connections are accepted and bytes read, but nothing is delivered either way,
   * so calls hang until their timeout.
   */
  void blackhole();

  /**
   * Traffic flows again. Connections that lost bytes while blackholed are closed, as a peer would
   * reset them, so clients reconnect instead of reading a torn stream.
   */
  void heal();

  /** Connections open now between this node and the server; 0 where there is no network. */
  int openConnections();

  /** One injector acting on several (a node that talks to every member of a cluster). */
  static FaultInjector all(List<? extends FaultInjector> injectors) {
    List<FaultInjector> copy = List.copyOf(requireNonNull(injectors, "injectors"));
    return new FaultInjector() {
      @Override
      public void cut() {
        copy.forEach(FaultInjector::cut);
      }

      @Override
      public void blackhole() {
        copy.forEach(FaultInjector::blackhole);
      }

      @Override
      public void heal() {
        copy.forEach(FaultInjector::heal);
      }

      @Override
      public int openConnections() {
        return copy.stream().mapToInt(FaultInjector::openConnections).sum();
      }

      @Override
      public String toString() {
        return copy.toString();
      }
    };
  }
}
