package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FaultProxy;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How {@link EtcdLeaseStore} uses etcd leases: one per election by default, handed on from a
 * release to the next holder, shared on request; and {@link EtcdLeaseStore#renewAll}.
 */
class EtcdLeasesIT extends EtcdClusterIT {

  private static final Duration TTL = Duration.ofSeconds(15);
  private static final Duration SHORT_TTL = Duration.ofSeconds(2);
  private static final String GRANT = "etcdserverpb.Lease/LeaseGrant";
  private static final String KEEP_ALIVE = "etcdserverpb.Lease/LeaseKeepAlive";
  private static final String TXN = "etcdserverpb.KV/Txn";
  private static final String RANGE = "etcdserverpb.KV/Range";

  @BeforeAll
  static void startOneMember() {
    startCluster(1, b -> b);
  }

  /** A store on a client of its own, as another process would have. */
  private EtcdLeaseStore store() {
    return store(ownClient());
  }

  private Client ownClient() {
    Client own = Client.builder().endpoints(etcd.endpoints()).build();
    toClose.add(own);
    return own;
  }

  private static ByteSequence key(String election) {
    return ByteSequence.from(EtcdLeaseStore.DEFAULT_PREFIX + election, UTF_8);
  }

  @Test
  void everyElectionGetsAnEtcdLeaseOfItsOwn() {
    EtcdLeaseStore store = store();

    Set<String> handles = new java.util.HashSet<>();
    for (int i = 0; i < 3; i++) {
      handles.add(granted(store.tryAcquire(election + "-" + i, "a", TTL)).handle());
    }

    assertThat(handles).hasSize(3);
  }

  @Test
  void aReleaseHandsTheKeyAndItsLeaseToTheNextHolderWithoutALeaseGrant() throws Exception {
    EtcdLeaseStore leader = store();
    CountedClient follower = new CountedClient();
    EtcdLeaseStore followerStore = store(follower.client());
    AtomicInteger changes = new AtomicInteger();
    toClose.add(followerStore.watch(election, changes::incrementAndGet).orElseThrow());
    // The first call says etcd confirmed the watch; from then on every change is seen.
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 1);
    Lease a = granted(leader.tryAcquire(election, "a", TTL));
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 2);

    leader.release(a);
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 3);
    follower.reset();
    Lease b = granted(followerStore.tryAcquire(election, "b", TTL));

    // The watch showed the release: one transaction, sent with a keep-alive of the released lease.
    assertThat(follower.count(GRANT)).as("lease grants").isZero();
    assertThat(follower.count(RANGE)).as("reads").isZero();
    assertThat(follower.count(TXN)).as("transactions").isEqualTo(1);
    assertThat(follower.count(KEEP_ALIVE)).as("keep-alives").isEqualTo(1);
    assertThat(b.handle()).isEqualTo(a.handle());
    assertThat(b.token()).isGreaterThan(a.token());
    assertThat(b.ttl()).isEqualTo(TTL);
    assertThatThrownBy(() -> leader.renew(a)).isInstanceOf(LeaseLostException.class);

    // The releasing store has let go of the lease: closing it leaves the new holder's key alone.
    leader.close();
    assertThat(followerStore.renew(b).token()).isEqualTo(b.token());
    assertThat(followerStore.read(election).orElseThrow().holder()).isEqualTo("b");
  }

  @Test
  void aReleasedElectionIsFreeToReadersAndToACandidateAskingAnotherTtl() {
    EtcdLeaseStore leader = store();
    EtcdLeaseStore other = store();
    Lease a = granted(leader.tryAcquire(election, "a", TTL));

    leader.release(a);

    assertThat(other.read(election)).isEmpty();
    Lease b = granted(other.tryAcquire(election, "b", SHORT_TTL));
    assertThat(b.handle())
        .as("a lease of its own, not the released %s one", TTL)
        .isNotEqualTo(a.handle());
    assertThat(b.ttl()).isEqualTo(SHORT_TTL);
    assertThat(other.renew(b).token()).isEqualTo(b.token());
  }

  @Test
  void aHolderOnATakenOverLeaseLosesItsKeyOneTtlAfterItsLastRenewalBegan() {
    EtcdLeaseStore leader = store();
    Client holderClient = Client.builder().endpoints(etcd.endpoints()).build();
    EtcdLeaseStore holder = EtcdLeaseStore.builder(holderClient).build();
    Lease a = granted(leader.tryAcquire(election, "a", SHORT_TTL));
    leader.release(a);
    Lease b = granted(holder.tryAcquire(election, "b", SHORT_TTL));
    assertThat(b.handle()).isEqualTo(a.handle());
    long renewStarted = System.nanoTime();
    holder.renew(b);

    // The new holder's process dies: no release, no revoke, no more keep-alives.
    holderClient.close();

    EtcdLeaseStore next = store();
    AtomicReference<Lease> c = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () ->
                next.tryAcquire(election, "c", SHORT_TTL)
                    .lease()
                    .map(
                        l -> {
                          c.set(l);
                          return true;
                        })
                    .orElse(false));
    long grantedAt = System.nanoTime();

    assertThat(Duration.ofNanos(grantedAt - renewStarted))
        .as("exclusion: not before the renewal's start + ttl")
        .isGreaterThanOrEqualTo(b.ttl());
    assertThat(c.get().token()).isGreaterThan(b.token());
  }

  @Test
  void aKeyDeletedByHandIsLostAtTheNextRenewalEvenThoughItsLeaseLives() throws Exception {
    EtcdLeaseStore holder = store();
    EtcdLeaseStore other = store();
    Lease a = granted(holder.tryAcquire(election, "a", TTL));
    client.getKVClient().delete(key(election)).get(5, TimeUnit.SECONDS);
    Lease b = granted(other.tryAcquire(election, "b", TTL));

    assertThatThrownBy(() -> holder.renew(a))
        .isInstanceOfSatisfying(
            LeaseLostException.class, e -> assertThat(e.holder()).contains("b"));
    holder.close();
    assertThat(other.renew(b).token()).isEqualTo(b.token());
  }

  @Test
  void aReleaseWithAnUnknownOutcomeLeavesAKeyTheSameCandidateTakesForANewTerm() {
    AtomicBoolean failNextTxn = new AtomicBoolean();
    Client failing =
        Client.builder()
            .endpoints(etcd.endpoints())
            .interceptor(
                new io.grpc.ClientInterceptor() {
                  @Override
                  public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(
                      io.grpc.MethodDescriptor<Q, R> method,
                      io.grpc.CallOptions options,
                      io.grpc.Channel next) {
                    if (method.getFullMethodName().equals(TXN) && failNextTxn.getAndSet(false)) {
                      // The request never leaves: the key stays as it was, but the store cannot
                      // know that.
                      return new io.grpc.ClientCall<>() {
                        @Override
                        public void start(Listener<R> listener, io.grpc.Metadata headers) {
                          listener.onClose(
                              io.grpc.Status.UNAVAILABLE.withDescription(
                                  "injected: connection lost"),
                              new io.grpc.Metadata());
                        }

                        @Override
                        public void request(int numMessages) {}

                        @Override
                        public void cancel(String message, Throwable cause) {}

                        @Override
                        public void halfClose() {}

                        @Override
                        public void sendMessage(Q message) {}
                      };
                    }
                    return next.newCall(method, options);
                  }
                })
            .build();
    toClose.add(failing);
    EtcdLeaseStore store = store(failing);
    Lease a = granted(store.tryAcquire(election, "a", TTL));

    failNextTxn.set(true);
    assertThatThrownBy(() -> store.release(a)).isInstanceOf(LeaseStoreException.class);
    Acquisition again = store.tryAcquire(election, "a", TTL);

    assertThat(again.isGranted())
        .as("the key still shows a's term; a's own acquisition must begin a new one: %s", again)
        .isTrue();
    assertThat(again.lease().orElseThrow().token()).isGreaterThan(a.token());
  }

  @Test
  void renewAllRenewsEachLeaseOnItsOwnLeaseAndRefusesEachLostOne() throws Exception {
    CountedClient calls = new CountedClient();
    EtcdLeaseStore store = store(calls.client());
    List<Lease> live = new ArrayList<>();
    for (int i = 0; i < store.renewBatchLimit(); i++) {
      live.add(granted(store.tryAcquire(election + "-" + i, "a", TTL)));
    }
    Lease released = live.remove(10);
    store.release(released);
    Lease deletedByHand = live.remove(100);
    client.getKVClient().delete(key(deletedByHand.election())).get(5, TimeUnit.SECONDS);
    List<Lease> batch = new ArrayList<>(live);
    batch.add(released);
    batch.add(deletedByHand);
    assertThat(batch).hasSize(store.renewBatchLimit());

    calls.reset();
    List<Renewal> outcomes = store.renewAll(batch);

    assertThat(outcomes).hasSameSizeAs(batch);
    for (int i = 0; i < live.size(); i++) {
      assertThat(outcomes.get(i).lease())
          .as("renewal of %s", live.get(i).election())
          .contains(live.get(i));
    }
    assertThat(outcomes.get(live.size()).failure()).containsInstanceOf(LeaseLostException.class);
    assertThat(outcomes.get(live.size() + 1).failure())
        .containsInstanceOf(LeaseLostException.class);
    // One keep-alive per lease still held (the released one is known gone without asking); the
    // keys compared in one read-only transaction and, since that found some lost, read in another.
    assertThat(calls.count(KEEP_ALIVE)).isEqualTo(live.size() + 1);
    assertThat(calls.count(TXN)).isEqualTo(2);
    assertThat(calls.count(RANGE)).isZero();
  }

  @Test
  void renewAllWithSharedLeasesSendsOneKeepAliveForTheWholeBatch() {
    CountedClient calls = new CountedClient();
    EtcdLeaseStore store =
        EtcdLeaseStore.builder(calls.client()).sharedLeases(Duration.ZERO).build();
    toClose.add(store);
    List<Lease> batch = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      batch.add(granted(store.tryAcquire(election + "-" + i, "a", TTL)));
    }

    calls.reset();
    List<Renewal> outcomes = store.renewAll(batch);

    assertThat(outcomes).allMatch(Renewal::isRenewed);
    assertThat(calls.count(KEEP_ALIVE)).isEqualTo(1);
    assertThat(calls.count(TXN))
        .as("read-only transactions of at most 128 comparisons, no reads")
        .isEqualTo(3);
  }

  @Test
  void renewAllWithSharedLeasesRefusesOnlyTheLeasesLostInTheBatch() throws Exception {
    CountedClient calls = new CountedClient();
    EtcdLeaseStore store =
        EtcdLeaseStore.builder(calls.client()).sharedLeases(Duration.ZERO).build();
    toClose.add(store);
    EtcdLeaseStore other = store();
    List<Lease> batch = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      batch.add(granted(store.tryAcquire(election + "-" + i, "a", TTL)));
    }
    // In the second transaction's chunk: one key deleted by hand, one deleted and taken by another.
    Lease deletedByHand = batch.get(140);
    client.getKVClient().delete(key(deletedByHand.election())).get(5, TimeUnit.SECONDS);
    Lease takenOver = batch.get(200);
    client.getKVClient().delete(key(takenOver.election())).get(5, TimeUnit.SECONDS);
    granted(other.tryAcquire(takenOver.election(), "b", TTL));

    calls.reset();
    List<Renewal> outcomes = store.renewAll(batch);

    for (int i = 0; i < batch.size(); i++) {
      if (i == 140 || i == 200) {
        assertThat(outcomes.get(i).failure())
            .as("renewal of %s", batch.get(i).election())
            .containsInstanceOf(LeaseLostException.class);
      } else {
        assertThat(outcomes.get(i).lease())
            .as("renewal of %s", batch.get(i).election())
            .contains(batch.get(i));
      }
    }
    assertThat(outcomes.get(200).failure().orElseThrow())
        .isInstanceOfSatisfying(
            LeaseLostException.class, e -> assertThat(e.holder()).contains("b"));
    // Three comparisons, and a read of the one chunk whose comparison failed.
    assertThat(calls.count(TXN)).isEqualTo(4);
  }

  @Test
  void renewAllFailsEachLeaseWithAStoreErrorWhenEtcdDoesNotAnswer() {
    FaultProxy proxy = FaultProxy.start(etcd.clientAddresses().get(0));
    toClose.add(proxy);
    Client through = Client.builder().endpoints("http://127.0.0.1:" + proxy.port()).build();
    toClose.add(through);
    Duration callTimeout = Duration.ofMillis(700);
    EtcdLeaseStore store = EtcdLeaseStore.builder(through).callTimeout(callTimeout).build();
    toClose.add(store);
    List<Lease> batch = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      batch.add(granted(store.tryAcquire(election + "-" + i, "a", TTL)));
    }

    proxy.blackhole();
    long started = System.nanoTime();
    List<Renewal> outcomes = store.renewAll(batch);
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    assertThat(outcomes)
        .hasSize(3)
        .allSatisfy(r -> assertThat(r.failure()).containsInstanceOf(LeaseStoreException.class));
    assertThat(outcomes)
        .noneSatisfy(r -> assertThat(r.failure()).containsInstanceOf(LeaseLostException.class));
    assertThat(took)
        .as("within the call timeout, with room for a busy machine")
        .isLessThan(callTimeout.multipliedBy(3));
    proxy.heal();
  }

  @Test
  void renewAllRefusesMoreThanItsLimit() {
    EtcdLeaseStore store = store();
    List<Lease> tooMany = new ArrayList<>();
    Lease lease = granted(store.tryAcquire(election, "a", TTL));
    for (int i = 0; i <= store.renewBatchLimit(); i++) {
      tooMany.add(lease);
    }

    assertThatThrownBy(() -> store.renewAll(tooMany))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("renewBatchLimit");
  }

  /** A client of its own whose gRPC calls are counted per method. */
  private final class CountedClient {
    private final java.util.Map<String, AtomicInteger> counts =
        new java.util.concurrent.ConcurrentHashMap<>();
    private final Client client;

    CountedClient() {
      client =
          Client.builder()
              .endpoints(etcd.endpoints())
              .interceptor(
                  new io.grpc.ClientInterceptor() {
                    @Override
                    public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(
                        io.grpc.MethodDescriptor<Q, R> method,
                        io.grpc.CallOptions options,
                        io.grpc.Channel next) {
                      counts
                          .computeIfAbsent(method.getFullMethodName(), m -> new AtomicInteger())
                          .incrementAndGet();
                      return next.newCall(method, options);
                    }
                  })
              .build();
      toClose.add(client);
    }

    Client client() {
      return client;
    }

    int count(String method) {
      return counts.getOrDefault(method, new AtomicInteger()).get();
    }

    void reset() {
      counts.clear();
    }

    @Override
    public String toString() {
      return counts.entrySet().stream()
          .map(e -> e.getKey() + "=" + e.getValue())
          .collect(Collectors.joining(", "));
    }
  }
}
