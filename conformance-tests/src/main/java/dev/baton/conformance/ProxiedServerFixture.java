package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import dev.baton.election.LeaseStore;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fixture for a backend that talks to its server over TCP: it puts one {@link FaultProxy} per
 * node in front of every server address, so each node's traffic can be cut on its own. A backend
 * says where its server is and how to open a store connected to a given address:
 *
 * <pre>{@code
 * final class PostgresFixture extends ProxiedServerFixture {
 *   protected List<InetSocketAddress> startServers() {
 *     RequiredServer.requireTcp("PostgreSQL", "127.0.0.1", 5432, "scripts/dev-servers start");
 *     return List.of(new InetSocketAddress("127.0.0.1", 5432));
 *   }
 *   protected LeaseStore openStore(String node, List<InetSocketAddress> through) {
 *     HikariDataSource pool = closeLater(pool("jdbc:postgresql://127.0.0.1:" + through.get(0).getPort() + "/test"));
 *     // Calls must fail within the renew deadline (2 s by default), also through a blackhole.
 *     return JdbcLeaseStore.builder(pool).callTimeout(Duration.ofMillis(800)).build();
 *   }
 *   public boolean canWatch() { return true; }
 * }
 * }</pre>
 *
 * <p>A server outage here cuts every node's proxies (the server keeps running); a fixture that can
 * really stop and restart its server overrides {@link #serverOutage()}, {@link #restore()} and
 * {@link #outageStopsServer()}. The fixture closes, in this order: the stores, what was passed to
 * {@link #closeLater} (last first), the proxies, then {@link #stopServers()}.
 */
@SuppressWarnings("try")
public abstract class ProxiedServerFixture implements ConformanceFixture {

  private static final Logger log = LoggerFactory.getLogger(ProxiedServerFixture.class);

  private final List<FaultProxy> proxies = new ArrayList<>();
  private final List<LeaseStore> stores = new ArrayList<>();
  private final Deque<AutoCloseable> resources = new ArrayDeque<>();
  private List<InetSocketAddress> servers;

  /**
   * Starts or reaches the server(s) and returns their addresses (loopback), once per test class.
   */
  protected abstract List<InetSocketAddress> startServers() throws Exception;

  /**
   * Opens node {@code node}'s store, connected to the server(s) only through {@code through} (the
   * node's proxies, in the order of {@link #startServers()}). Its calls must time out well within
   * the renew deadline.
   */
  protected abstract LeaseStore openStore(String node, List<InetSocketAddress> through)
      throws Exception;

  /**
   * Stops what {@link #startServers()} started; nothing by default (the server was already
   * running).
   */
  protected void stopServers() throws Exception {}

  /** Closes {@code resource} (a pool, a client) when the fixture closes, after the stores. */
  protected final <T extends AutoCloseable> T closeLater(T resource) {
    synchronized (resources) {
      resources.push(requireNonNull(resource, "resource"));
    }
    return resource;
  }

  /** The servers' own addresses, as {@link #startServers()} returned them. */
  protected final List<InetSocketAddress> serverAddresses() {
    return servers;
  }

  @Override
  public final void start() throws Exception {
    servers = List.copyOf(startServers());
    if (servers.isEmpty()) {
      throw new IllegalStateException(getClass().getName() + ".startServers() returned no address");
    }
  }

  @Override
  public NodeConnection connect(String node) throws Exception {
    List<FaultProxy> mine = new ArrayList<>();
    for (InetSocketAddress server : servers) {
      FaultProxy proxy = FaultProxy.start(server);
      synchronized (proxies) {
        proxies.add(proxy);
      }
      mine.add(proxy);
    }
    List<InetSocketAddress> through = mine.stream().map(FaultProxy::address).toList();
    LeaseStore store = openStore(node, through);
    synchronized (stores) {
      stores.add(store);
    }
    return new NodeConnection(store, mine.size() == 1 ? mine.get(0) : FaultInjector.all(mine));
  }

  /** Cuts every node's proxies; the server keeps running. */
  @Override
  public void serverOutage() throws Exception {
    synchronized (proxies) {
      proxies.forEach(FaultProxy::cut);
    }
  }

  @Override
  public void restore() throws Exception {
    synchronized (proxies) {
      proxies.forEach(FaultProxy::heal);
    }
  }

  @Override
  public void close() throws Exception {
    List<Exception> failures = new ArrayList<>();
    synchronized (stores) {
      for (LeaseStore store : stores) {
        closeCollecting(store, failures);
      }
      stores.clear();
    }
    synchronized (resources) {
      while (!resources.isEmpty()) {
        closeCollecting(resources.pop(), failures);
      }
    }
    synchronized (proxies) {
      proxies.forEach(FaultProxy::close);
      proxies.clear();
    }
    try {
      stopServers();
    } catch (Exception e) {
      failures.add(e);
    }
    if (!failures.isEmpty()) {
      Exception first = failures.get(0);
      failures.subList(1, failures.size()).forEach(first::addSuppressed);
      throw first;
    }
  }

  private static void closeCollecting(AutoCloseable c, List<Exception> failures) {
    try {
      c.close();
    } catch (Exception e) {
      log.warn("closing {} failed", c, e);
      failures.add(e);
    }
  }
}
