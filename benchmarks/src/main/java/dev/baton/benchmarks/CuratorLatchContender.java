package dev.baton.benchmarks;

import dev.baton.conformance.FaultProxy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Apache Curator's {@code LeaderLatch} on the same ZooKeeper server, as Curator's getting-started
 * page and the recipe's page show it: {@code ExponentialBackoffRetry(1000, 3)}, a latch per
 * participant with a listener, {@code hasLeadership()} as the answer to "do I lead", {@code
 * close()} to leave. The session timeout is the lease duration, so both sides get the same lease.
 */
final class CuratorLatchContender implements Contender {

  private final ZooKeeperServerInJvm zk;
  private final Duration session;

  CuratorLatchContender(ZooKeeperServerInJvm zk, Settings s) {
    this.zk = zk;
    this.session = s.leaseDuration();
  }

  @Override
  public String name() {
    return "Curator LeaderLatch";
  }

  @Override
  public String server() {
    return "ZooKeeper " + zk.version() + " in this JVM (the same server)";
  }

  @Override
  public String library() {
    return "Apache Curator "
        + Versions.of(LeaderLatch.class, "org.apache.curator", "curator-recipes");
  }

  @Override
  public Map<String, String> settings() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("session timeout (the lease)", session.toMillis() + " ms");
    s.put("connection timeout", "15000 ms (Curator's default)");
    s.put("retry policy", "ExponentialBackoffRetry(1000 ms, 3)");
    s.put(
        "connection state error policy", "standard (SUSPENDED ends leadership; Curator's default)");
    s.put("LeaderLatch close mode", "SILENT (default)");
    return s;
  }

  @Override
  public String requestsCountedAs() {
    return "packets the ZooKeeper server received on the node's session (requests and pings)";
  }

  @Override
  public Duration leaseDuration() {
    return session;
  }

  @Override
  public Node newNode(String election, String candidate, Timeline timeline) {
    FaultProxy proxy = FaultProxy.start(zk.address());
    WireLog wire = ZooKeeperWire.tapping(proxy);
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString("127.0.0.1:" + proxy.port())
            .sessionTimeoutMs((int) session.toMillis())
            .retryPolicy(new ExponentialBackoffRetry(1000, 3))
            .build();
    return new LatchNode(candidate, timeline, proxy, wire, client, election, zk);
  }

  private static final class LatchNode extends Node {
    private final CuratorFramework client;
    private final LeaderLatch latch;

    LatchNode(
        String id,
        Timeline timeline,
        FaultProxy proxy,
        WireLog wire,
        CuratorFramework client,
        String election,
        ZooKeeperServerInJvm zk) {
      super(
          id,
          timeline,
          proxy,
          Optional.of(proxy),
          Backends.sessionPackets(zk, client),
          Optional.of(wire));
      this.client = client;
      this.latch = new LeaderLatch(client, "/curator-bench/" + election, id);
      latch.addListener(
          new LeaderLatchListener() {
            @Override
            public void isLeader() {
              elected();
            }

            @Override
            public void notLeader() {
              revoked();
            }
          });
    }

    @Override
    void start() throws Exception {
      client.start();
      latch.start();
    }

    @Override
    void leave() throws Exception {
      latch.close();
    }

    @Override
    boolean believesLeader() {
      return latch.hasLeadership();
    }

    @Override
    void closeClient() throws Exception {
      try {
        if (latch.getState() == LeaderLatch.State.STARTED) {
          latch.close();
        }
      } finally {
        client.close();
      }
    }
  }
}
