package dev.baton.conformance;

import java.util.List;

/**
 * What a backend supplies to run the conformance suite: the real server(s), one store per simulated
 * node with its own fault switch, and what the backend can and cannot do.
 *
 * <p>The suite calls {@link #start()} once per test class, {@link #connect} once per node name (up
 * to ten nodes, reused by every scenario of the class), and {@link #close()} once at the end. The
 * fixture owns every store it opened and closes them; the suite never does.
 *
 * <p>Most backends extend {@link ProxiedServerFixture} (give it the server's address and a way to
 * open a store connected to an address; it puts a {@link FaultProxy} in front of every node) or use
 * {@link InProcessFixture} (stores with no network, faults simulated by a {@link
 * FaultyLeaseStore}).
 *
 * <p>Every store must time out its calls well within {@link Timings#renewDeadline()} (half of it is
 * a good choice): the partition scenario blackholes a node and expects its calls to fail, not to
 * hang.
 */
// close() may throw whatever closing a server throws, InterruptedException included.
@SuppressWarnings("try")
public interface ConformanceFixture extends AutoCloseable {

  /**
   * Starts or reaches the server(s). Use {@link RequiredServer} for servers that must already run,
   * so a missing one fails in CI and is skipped with a hint elsewhere.
   */
  void start() throws Exception;

  /**
   * Opens the store of the simulated node {@code node}, whose traffic {@link
   * NodeConnection#faults()} controls.
   */
  NodeConnection connect(String node) throws Exception;

  /**
   * The timings scenarios use; {@link Timings#SHORT} unless the backend needs others (etcd counts
   * whole seconds).
   */
  default Timings timings() {
    return Timings.SHORT;
  }

  /**
   * Whether the stores offer {@link dev.baton.election.LeaseStore#watch}; the suite checks the
   * claim.
   */
  default boolean canWatch() {
    return false;
  }

  /**
   * Whether a leader on these stores learns at once that its lease is gone ({@link
   * dev.baton.election.LeaseStore#watchLease}), not only at its next renewal; the suite checks the
   * claim.
   */
  default boolean pushesLeaseLoss() {
    return false;
  }

  /**
   * Whether {@link #deleteLease} works here. False by default: the scenario that needs it is then
   * skipped, saying so.
   */
  default boolean canDeleteLeases() {
    return false;
  }

  /**
   * Deletes {@code election}'s lease behind its holder's back, straight on the server as an
   * operator or a cleanup job would (the etcd key, the ZooKeeper node, the Kubernetes Lease, the
   * table row), through none of the nodes' stores. Only called when {@link #canDeleteLeases()}.
   */
  default void deleteLease(String election) throws Exception {
    throw new UnsupportedOperationException(getClass().getName() + " cannot delete a lease");
  }

  /**
   * True when the server judges expiry (a database's clock, an etcd lease, a ZooKeeper session), so
   * a fresh candidate takes an expired lease at once. False for stores that judge it by each
   * follower's observed time, where a follower waits a lease duration from when it first saw the
   * record.
   */
  default boolean judgesExpiryOnServer() {
    return true;
  }

  /**
   * True when {@link #serverOutage()} really stops the whole server (and {@link #restore()}
   * restarts it on the same address with its data); false when it only cuts every node off.
   */
  default boolean outageStopsServer() {
    return false;
  }

  /**
   * Makes the server unavailable to every node: stop it, or cut every node's traffic ({@link
   * ProxiedServerFixture} and {@link InProcessFixture} do the latter by default).
   */
  void serverOutage() throws Exception;

  /** Ends {@link #serverOutage()}. Called after every scenario, also when there was no outage. */
  void restore() throws Exception;

  /**
   * Election names this backend cannot store; building an elector for one must fail with a {@link
   * dev.baton.election.ConfigurationException} naming it. Empty when it takes any name.
   */
  default List<String> refusedElectionNames() {
    return List.of();
  }

  /** Closes every store, proxy and server the fixture opened or started. */
  @Override
  void close() throws Exception;
}
