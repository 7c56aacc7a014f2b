package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import dev.baton.election.LeaseStore;
import dev.baton.election.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * A fixture for stores without a network to cut (an in-memory store, an embedded database in the
 * same JVM): each node gets a {@link FaultyLeaseStore} over its store, and a server outage cuts
 * every node. Subclass it to change timings or capabilities.
 *
 * <pre>{@code
 * class MemoryConformanceTest extends LeaseStoreConformance {
 *   protected ConformanceFixture fixture() {
 *     return InProcessFixture.sharing(new MemoryLeaseStore(), Duration.ofSeconds(1));
 *   }
 * }
 * }</pre>
 */
public class InProcessFixture implements ConformanceFixture {

  private final Function<String, LeaseStore> storeForNode;
  private final Duration callTimeout;
  private final List<FaultyLeaseStore> nodes = new ArrayList<>();
  private final Set<LeaseStore> opened = Collections.newSetFromMap(new IdentityHashMap<>());
  private Boolean canWatch;

  /**
   * @param storeForNode opens (or returns a shared) store for a node name; the fixture closes every
   *     store it returned, each once
   * @param callTimeout how long a blackholed call hangs before it fails; well under the renew
   *     deadline
   */
  public InProcessFixture(Function<String, LeaseStore> storeForNode, Duration callTimeout) {
    this.storeForNode = requireNonNull(storeForNode, "storeForNode");
    this.callTimeout = requireNonNull(callTimeout, "callTimeout");
  }

  /** Every node uses {@code store} (and the fixture closes it at the end). */
  public static InProcessFixture sharing(LeaseStore store, Duration callTimeout) {
    requireNonNull(store, "store");
    return new InProcessFixture(node -> store, callTimeout);
  }

  @Override
  public void start() {}

  @Override
  public synchronized NodeConnection connect(String node) {
    LeaseStore store = requireNonNull(storeForNode.apply(node), "store for node " + node);
    opened.add(store);
    if (canWatch == null) {
      Optional<Subscription> probe = store.watch("conformance-watch-probe", () -> {});
      canWatch = probe.isPresent();
      probe.ifPresent(Subscription::close);
    }
    FaultyLeaseStore faulty = new FaultyLeaseStore(store, callTimeout);
    nodes.add(faulty);
    return new NodeConnection(faulty, faulty);
  }

  /** Whether the stores returned a watch when the first node connected. */
  @Override
  public synchronized boolean canWatch() {
    return Boolean.TRUE.equals(canWatch);
  }

  /** Cuts every node; the stores stay as they are. */
  @Override
  public synchronized void serverOutage() {
    nodes.forEach(FaultyLeaseStore::cut);
  }

  @Override
  public synchronized void restore() {
    nodes.forEach(FaultyLeaseStore::heal);
  }

  @Override
  public synchronized void close() {
    nodes.forEach(FaultyLeaseStore::close);
    nodes.clear();
    opened.forEach(LeaseStore::close);
    opened.clear();
  }
}
