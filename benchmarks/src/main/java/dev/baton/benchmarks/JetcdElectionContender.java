package dev.baton.benchmarks;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.baton.conformance.FaultProxy;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Election;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.election.LeaderKey;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * jetcd's {@code Election} client on the same etcd server, used as etcd's own election recipe (Go's
 * {@code concurrency} package, which jetcd's Election service fronts) is used: grant a lease of the
 * lease duration, keep it alive, {@code campaign} with it, and lead until {@code resign}.
 * Leadership is lost when the keep-alive ends: jetcd completes the keep-alive observer when the
 * lease's local deadline (last answer + TTL) passes, or reports NOT_FOUND when etcd no longer knows
 * the lease, as Go's {@code Session.Done()} does. Other keep-alive errors are transient (jetcd
 * reconnects), so they do not end leadership.
 */
final class JetcdElectionContender implements Contender {

  private final EtcdServer etcd;
  private final String version;
  private final long ttlSeconds;

  JetcdElectionContender(EtcdServer etcd, String version, Settings s) {
    this.etcd = etcd;
    this.version = version;
    this.ttlSeconds = Math.max(1, (s.leaseDuration().toMillis() + 999) / 1000);
  }

  @Override
  public String name() {
    return "jetcd Election";
  }

  @Override
  public String server() {
    return "etcd " + version + ", one member (the same server)";
  }

  @Override
  public String library() {
    return "jetcd " + Versions.of(Election.class, "io.etcd", "jetcd-core");
  }

  @Override
  public Map<String, String> settings() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("lease TTL", ttlSeconds + " s");
    s.put(
        "keep-alive",
        "jetcd's Lease.keepAlive (every TTL/3; local deadline = last answer + TTL, checked every second)");
    s.put("jetcd client", "defaults");
    s.put("leader until", "resign, or the keep-alive completes / reports NOT_FOUND");
    return s;
  }

  @Override
  public String requestsCountedAs() {
    return "gRPC request messages the client sent (unary calls, keep-alive and watch stream messages)";
  }

  @Override
  public Duration leaseDuration() {
    return Duration.ofSeconds(ttlSeconds);
  }

  @Override
  public Node newNode(String election, String candidate, Timeline timeline) {
    FaultProxy proxy = FaultProxy.start(etcd.address());
    GrpcRequestCounter counter = new GrpcRequestCounter();
    Client client =
        Client.builder().endpoints("http://127.0.0.1:" + proxy.port()).interceptor(counter).build();
    return new CampaignNode(candidate, timeline, proxy, counter, client, election, ttlSeconds);
  }

  private static final class CampaignNode extends Node {
    private final Client client;
    private final Election elections;
    private final Lease leases;
    private final ByteSequence name;
    private final ByteSequence proposal;
    private final long ttlSeconds;
    private volatile long leaseId;
    private volatile CloseableClient keepAlive;
    private volatile LeaderKey key;
    private volatile boolean leading;
    private volatile boolean lastAnswerSeen;
    private volatile long lastAnswerNanos;

    CampaignNode(
        String id,
        Timeline timeline,
        FaultProxy proxy,
        GrpcRequestCounter counter,
        Client client,
        String election,
        long ttlSeconds) {
      super(id, timeline, proxy, Optional.of(proxy), counter::messages, Optional.of(counter.log()));
      this.client = client;
      this.elections = client.getElectionClient();
      this.leases = client.getLeaseClient();
      this.name = ByteSequence.from("/jetcd-bench/" + election, UTF_8);
      this.proposal = ByteSequence.from(id, UTF_8);
      this.ttlSeconds = ttlSeconds;
    }

    @Override
    void start() {
      leases
          .grant(ttlSeconds)
          .thenCompose(
              granted -> {
                leaseId = granted.getID();
                keepAlive = leases.keepAlive(leaseId, new KeepAliveObserver());
                return elections.campaign(name, leaseId, proposal);
              })
          .thenAccept(
              won -> {
                key = won.getLeader();
                leading = true;
                elected();
              });
    }

    private final class KeepAliveObserver implements StreamObserver<LeaseKeepAliveResponse> {
      @Override
      public void onNext(LeaseKeepAliveResponse response) {
        lastAnswerNanos = System.nanoTime();
        lastAnswerSeen = true;
      }

      @Override
      public void onError(Throwable t) {
        if (t instanceof EtcdException
            && ((EtcdException) t).getErrorCode() == ErrorCode.NOT_FOUND) {
          lose();
        }
      }

      @Override
      public void onCompleted() {
        lose();
      }
    }

    private synchronized void lose() {
      if (leading) {
        leading = false;
        revoked();
      }
    }

    @Override
    void leave() throws Exception {
      LeaderKey k = key;
      lose();
      if (k != null) {
        elections.resign(k).get(5, TimeUnit.SECONDS);
      }
    }

    @Override
    boolean believesLeader() {
      return leading;
    }

    /** When etcd last answered a keep-alive: the lease runs at least TTL from a little before. */
    @Override
    OptionalLong lastConfirmedRenewalNanos() {
      return lastAnswerSeen ? OptionalLong.of(lastAnswerNanos) : OptionalLong.empty();
    }

    @Override
    void closeClient() throws Exception {
      try {
        CloseableClient k = keepAlive;
        if (k != null) {
          k.close();
        }
        if (leaseId != 0) {
          // What Go's Session.Close does; a cut node's revoke fails, and its lease simply expires.
          leases.revoke(leaseId).handle((r, e) -> null).get(2, TimeUnit.SECONDS);
        }
      } catch (java.util.concurrent.TimeoutException e) {
        // the lease expires on its own
      } finally {
        client.close();
      }
    }
  }
}
