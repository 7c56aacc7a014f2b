package dev.baton.zookeeper;

import static java.util.stream.Collectors.joining;

import dev.baton.conformance.ProxiedServerFixture;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import dev.baton.testservers.ZooKeeperQuorum;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;

/**
 * The conformance suite's ZooKeeper: a three-member ensemble in this JVM (or, with {@code
 * -Dbaton.servers=containers}, in containers). Each simulated node is a {@link CuratorFramework} of
 * its own whose connect string lists that node's three proxies, one per member, so cutting a node
 * cuts it off from the whole ensemble.
 *
 * <p>The session timeout is the lease: each client asks for the suite's lease duration (the store
 * refuses a longer ttl than the negotiated timeout), which the members grant unchanged since it
 * lies within their bounds. A server outage kills all three members; restore restarts them on the
 * same ports with their data, so sessions and lease nodes survive it as they would a real
 * ensemble's restart.
 */
final class ZooKeeperEnsembleFixture extends ProxiedServerFixture {

  /**
   * Half-second ticks: sessions of 0.5 to 10 s, expiry checked every half second, and a member may
   * lag 2.5 s behind the quorum leader (syncLimit 5) before it is dropped, which a busy machine
   * needs.
   */
  private static final int TICK_MILLIS = 500;

  private final Timings timings = Timings.SHORT;

  /**
   * Half the renew deadline: a blackholed call fails well before the elector gives up, and a write
   * that waits for a busy machine's disk (every member syncs its log) still fits.
   */
  private final Duration callTimeout = timings.renewDeadline().dividedBy(2);

  private final Duration sessionTimeout = timings.leaseDuration();
  private ZooKeeperQuorum ensemble;
  private volatile boolean stopped;
  private CuratorFramework operator;

  @Override
  protected List<InetSocketAddress> startServers() {
    ensemble = ZooKeeperQuorum.start(TICK_MILLIS);
    if (sessionTimeout.compareTo(ensemble.minSessionTimeout()) < 0
        || sessionTimeout.compareTo(ensemble.maxSessionTimeout()) > 0) {
      throw new IllegalStateException(
          "the session timeout "
              + sessionTimeout
              + " lies outside the members' bounds ["
              + ensemble.minSessionTimeout()
              + ", "
              + ensemble.maxSessionTimeout()
              + "]: the members would clamp it");
    }
    try {
      operator(); // now, so that a deletion's timing does not include a session's start
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while connecting the operator's client", e);
    }
    return ensemble.clientAddresses();
  }

  @Override
  protected LeaseStore openStore(String node, List<InetSocketAddress> through) {
    String connectString =
        through.stream().map(a -> a.getHostString() + ":" + a.getPort()).collect(joining(","));
    CuratorFramework client =
        closeLater(ZooKeeperServers.pinnedClient(connectString, sessionTimeout));
    client.start();
    return ZooKeeperLeaseStore.builder(client).callTimeout(callTimeout).build();
  }

  @Override
  protected void stopServers() {
    if (ensemble != null) {
      ensemble.close();
    }
  }

  @Override
  public Timings timings() {
    return timings;
  }

  @Override
  public boolean canWatch() {
    return true;
  }

  @Override
  public boolean pushesLeaseLoss() {
    return true;
  }

  @Override
  public boolean canDeleteLeases() {
    return true;
  }

  /**
   * Deletes the holder's node, the first in the election's line, with a session of the fixture's
   * own straight to the members, as an operator's {@code zkCli delete} would.
   */
  @Override
  public void deleteLease(String election) throws Exception {
    String electionPath = ZooKeeperLeaseStore.DEFAULT_BASE_PATH + "/" + election;
    CuratorFramework operator = operator();
    String holder =
        operator.getChildren().forPath(electionPath).stream()
            .filter(n -> Line.sequence(n) >= 0)
            .min(Comparator.comparingLong(Line::sequence))
            .orElseThrow(() -> new IllegalStateException("nobody holds " + election));
    operator.delete().forPath(electionPath + "/" + holder);
  }

  private synchronized CuratorFramework operator() throws InterruptedException {
    if (operator == null) {
      String connectString =
          ensemble.clientAddresses().stream()
              .map(a -> a.getHostString() + ":" + a.getPort())
              .collect(joining(","));
      operator = closeLater(ZooKeeperServers.pinnedClient(connectString, sessionTimeout));
      operator.start();
      operator.blockUntilConnected();
    }
    return operator;
  }

  @Override
  public List<String> refusedElectionNames() {
    return List.of("a/b", "..");
  }

  @Override
  public boolean outageStopsServer() {
    return true;
  }

  @Override
  public void serverOutage() {
    stopped = true;
    ensemble.killAll();
  }

  @Override
  public void restore() throws Exception {
    super.restore();
    if (stopped) {
      ensemble.restartAll();
      stopped = false;
    }
  }
}
