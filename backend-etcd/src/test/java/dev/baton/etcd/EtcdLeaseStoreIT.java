package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.baton.conformance.FaultProxy;
import dev.baton.conformance.StopAfterUnansweredGrant;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Subscription;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The lease contract of {@link EtcdLeaseStore} on a real three-member etcd cluster. */
class EtcdLeaseStoreIT extends EtcdClusterIT {

  private static final Duration TTL = Duration.ofSeconds(15);
  private static final Duration SHORT_TTL = Duration.ofSeconds(2);
  private static final String KEEP_ALIVE = "etcdserverpb.Lease/LeaseKeepAlive";

  private static final AtomicInteger keepAlivesSent = new AtomicInteger();

  @BeforeAll
  static void startThreeMembers() {
    startCluster(3, b -> b.interceptor(countCalls(KEEP_ALIVE, keepAlivesSent)));
  }

  private EtcdLeaseStore store() {
    return store(client);
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, UTF_8);
  }

  private static KeyValue electionKey(String election) throws Exception {
    List<KeyValue> kvs =
        client
            .getKVClient()
            .get(bytes(EtcdLeaseStore.DEFAULT_PREFIX + election))
            .get(5, TimeUnit.SECONDS)
            .getKvs();
    assertThat(kvs).as("key of %s", election).hasSize(1);
    return kvs.get(0);
  }

  @Test
  void grantsAFreeElectionAndRefusesAnotherCandidateWhileHeld() {
    EtcdLeaseStore store = store();

    Lease a = granted(store.tryAcquire(election, "a", TTL));
    Acquisition b = store.tryAcquire(election, "b", TTL);

    assertThat(a.candidate()).isEqualTo("a");
    assertThat(b.isGranted()).isFalse();
    LeaseRecord holder = b.holder().orElseThrow();
    assertThat(holder.holder()).isEqualTo("a");
    assertThat(holder.token()).isEqualTo(a.token());
    assertThat(holder.ttl()).isEqualTo(a.ttl());
  }

  @Test
  void anotherStoreOfTheSameCandidateIdIsRefusedToo() {
    // Two processes configured with one candidate id must not both lead.
    Lease first = granted(store().tryAcquire(election, "same", TTL));

    Acquisition second = store().tryAcquire(election, "same", TTL);

    assertThat(second.isGranted()).isFalse();
    assertThat(second.holder().orElseThrow().token()).isEqualTo(first.token());
  }

  @Test
  void theHoldersOwnIdIsRefusedInTheSameStoreWhileItsLeaseIsLive() {
    // Two electors of one process with one id, or an elector whose release did not get through.
    EtcdLeaseStore store = store();
    Lease first = granted(store.tryAcquire(election, "same", TTL));

    Acquisition again = store.tryAcquire(election, "same", TTL);

    assertThat(again.isGranted()).as("an acquire of the holder's id: %s", again).isFalse();
    assertThat(List.of(again.holder().orElseThrow().holder(), again.holder().orElseThrow().token()))
        .containsExactly("same", first.token());
    assertThat(store.renew(first).token()).isEqualTo(first.token());
    store.release(first);
    assertThat(granted(store.tryAcquire(election, "same", TTL)).token().isNewerThan(first.token()))
        .isTrue();
  }

  @Test
  void reportsTheTtlRoundedUpToWholeSecondsAndGivesEtcdExactlyThat() throws Exception {
    EtcdLeaseStore store = store();

    Lease fractional = granted(store.tryAcquire(election, "a", Duration.ofMillis(1500)));
    Lease whole = granted(store.tryAcquire(election + "-whole", "a", TTL));

    assertThat(fractional.ttl()).isEqualTo(Duration.ofSeconds(2));
    assertThat(whole.ttl()).isEqualTo(TTL);
    assertThat(grantedTtlOf(election)).isEqualTo(2);
    assertThat(grantedTtlOf(election + "-whole")).isEqualTo(TTL.getSeconds());
  }

  @Test
  void aTtlUnderEtcdsMinimumGetsTheMinimumAndReportsIt() throws Exception {
    // etcd raises a TTL below 1.5 election timeouts (here 1.5 s, so 2 s in whole seconds).
    Lease lease = granted(store().tryAcquire(election, "a", Duration.ofMillis(300)));

    assertThat(lease.ttl())
        .isEqualTo(Duration.ofSeconds(grantedTtlOf(election)))
        .isGreaterThanOrEqualTo(Duration.ofMillis(300));
  }

  @Test
  void withSharedLeasesEtcdGetsTheSharingWindowOnTop() throws Exception {
    EtcdLeaseStore store =
        EtcdLeaseStore.builder(client).sharedLeases(Duration.ofSeconds(1)).build();
    toClose.add(store);

    Lease lease = granted(store.tryAcquire(election, "a", TTL));

    assertThat(lease.ttl()).isEqualTo(TTL);
    assertThat(grantedTtlOf(election)).isEqualTo(TTL.getSeconds() + 1);
  }

  private static long grantedTtlOf(String election) throws Exception {
    return client
        .getLeaseClient()
        .timeToLive(electionKey(election).getLease(), LeaseOption.DEFAULT)
        .get(5, TimeUnit.SECONDS)
        .getGrantedTTL();
  }

  @Test
  void everyGrantBeginsANewTermEvenForTheSameCandidateAfterItsRelease() throws Exception {
    EtcdLeaseStore store = store();

    Lease first = granted(store.tryAcquire(election, "a", TTL));
    store.release(first);
    Lease second = granted(store.tryAcquire(election, "a", TTL));

    assertThat(second.token()).isGreaterThan(first.token());
    assertThat(electionKey(election).getModRevision()).isEqualTo(second.token().value());
    assertThatThrownBy(() -> store.renew(first)).isInstanceOf(LeaseLostException.class);
    assertThat(store.renew(second).token()).isEqualTo(second.token());
  }

  @Test
  void aNewHolderGetsAHigherTokenThanEveryEarlierGrant() {
    EtcdLeaseStore store = store();
    Lease a = granted(store.tryAcquire(election, "a", TTL));
    store.release(a);

    Lease b = granted(store.tryAcquire(election, "b", TTL));

    assertThat(b.token()).isGreaterThan(a.token());
  }

  @Test
  void renewKeepsTheToken() {
    EtcdLeaseStore store = store();
    Lease lease = granted(store.tryAcquire(election, "a", TTL));

    for (int i = 0; i < 5; i++) {
      assertThat(store.renew(lease).token()).isEqualTo(lease.token());
    }
    assertThat(store.read(election).orElseThrow().token()).isEqualTo(lease.token());
  }

  @Test
  void anotherCandidateIsGrantedOnlyAfterEtcdExpiredTheHoldersKey() {
    Client holderClient = Client.builder().endpoints(etcd.endpoints()).build();
    EtcdLeaseStore holderStore = store(holderClient);
    Lease a = granted(holderStore.tryAcquire(election, "a", SHORT_TTL));
    long renewStarted = System.nanoTime();
    holderStore.renew(a);

    // The holder's process dies: no release, no revoke, no more keep-alives.
    holderClient.close();

    EtcdLeaseStore followerStore = store();
    AtomicReference<Lease> b = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () ->
                followerStore
                    .tryAcquire(election, "b", SHORT_TTL)
                    .lease()
                    .map(
                        l -> {
                          b.set(l);
                          return true;
                        })
                    .orElse(false));
    long grantedAt = System.nanoTime();

    assertThat(Duration.ofNanos(grantedAt - renewStarted))
        .as("exclusion: not before the renewal's start + ttl")
        .isGreaterThanOrEqualTo(a.ttl());
    assertThat(b.get().token()).isGreaterThan(a.token());
  }

  @Test
  void renewIsRefusedAfterExpiryAndAfterTakeover() {
    EtcdLeaseStore holderStore = store();
    Lease a = granted(holderStore.tryAcquire(election, "a", SHORT_TTL));
    EtcdLeaseStore otherStore = store();
    // Nobody renews: etcd expires the key.
    await().atMost(Duration.ofSeconds(15)).until(() -> otherStore.read(election).isEmpty());

    assertThatThrownBy(() -> holderStore.renew(a)).isInstanceOf(LeaseLostException.class);

    Lease b = granted(otherStore.tryAcquire(election, "b", TTL));
    assertThatThrownBy(() -> holderStore.renew(a)).isInstanceOf(LeaseLostException.class);
    assertThat(otherStore.renew(b).token()).isEqualTo(b.token());
  }

  @Test
  void theNextAcquisitionAfterTheLeaseExpiredGrantsAFreshOne() {
    EtcdLeaseStore store = store();
    Lease first = granted(store.tryAcquire(election, "a", SHORT_TTL));
    await().atMost(Duration.ofSeconds(15)).until(() -> store.read(election).isEmpty());
    assertThatThrownBy(() -> store.renew(first)).isInstanceOf(LeaseLostException.class);

    Lease second = granted(store.tryAcquire(election, "a", SHORT_TTL));

    assertThat(second.handle()).isNotEqualTo(first.handle());
    assertThat(store.renew(second).token()).isEqualTo(second.token());
  }

  @Test
  void releaseLetsAnotherCandidateInAtOnce() {
    EtcdLeaseStore store = store();
    Lease a = granted(store.tryAcquire(election, "a", TTL));

    store.release(a);
    Acquisition b = store.tryAcquire(election, "b", TTL);

    assertThat(b.isGranted()).isTrue();
    assertThatThrownBy(() -> store.renew(a)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void aReadAnsweredAfterOurOwnReleaseDoesNotShowUsAsTheHolder() throws Exception {
    // A new term's read of the key goes out while the candidate still holds it; its answer is held
    // back until the candidate's release has ended. The key it shows is ours, on a lease the store
    // has dropped with the release: the election is free, not held by us.
    HeldReads reads = new HeldReads();
    Client slowReads = Client.builder().endpoints(etcd.endpoints()).interceptor(reads).build();
    toClose.add(slowReads);
    EtcdLeaseStore store = store(slowReads);
    Lease lease = granted(store.tryAcquire(election, "a", TTL));
    CountDownLatch gate = new CountDownLatch(1);
    reads.holdNext(gate);
    CompletableFuture<Acquisition> again =
        CompletableFuture.supplyAsync(() -> store.tryAcquire(election, "a", TTL));
    assertThat(reads.answered.await(20, TimeUnit.SECONDS)).as("the read was answered").isTrue();

    store.release(lease);
    gate.countDown();

    Acquisition acquisition = again.get(20, TimeUnit.SECONDS);
    assertThat(acquisition.isGranted()).as("after our own release: %s", acquisition).isTrue();
    assertThat(acquisition.lease().orElseThrow().token().isNewerThan(lease.token())).isTrue();
  }

  /** Holds back the answer of the next key read until its gate opens. */
  private static final class HeldReads implements ClientInterceptor {
    private final AtomicReference<CountDownLatch> next = new AtomicReference<>();
    final CountDownLatch answered = new CountDownLatch(1);

    void holdNext(CountDownLatch gate) {
      next.set(gate);
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel channel) {
      ClientCall<Q, R> call = channel.newCall(method, options);
      if (!method.getFullMethodName().equals("etcdserverpb.KV/Range")) {
        return call;
      }
      CountDownLatch gate = next.getAndSet(null);
      if (gate == null) {
        return call;
      }
      return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          super.start(
              new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onMessage(R message) {
                  answered.countDown();
                  try {
                    gate.await(20, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  super.onMessage(message);
                }
              },
              headers);
        }
      };
    }
  }

  @Test
  void releaseNeverRemovesSomeoneElsesLease() {
    EtcdLeaseStore store = store();
    Lease old = granted(store.tryAcquire(election, "a", SHORT_TTL));
    await().atMost(Duration.ofSeconds(15)).until(() -> store.read(election).isEmpty());
    Lease b = granted(store.tryAcquire(election, "b", TTL));

    store.release(old);

    assertThat(store.read(election).orElseThrow().holder()).isEqualTo("b");
    assertThat(store.renew(b).token()).isEqualTo(b.token());
  }

  @Test
  void releaseOfAnEarlierTermOfTheSameCandidateKeepsTheNewTerm() {
    EtcdLeaseStore store = store();
    Lease first = granted(store.tryAcquire(election, "a", TTL));
    store.release(first);
    Lease second = granted(store.tryAcquire(election, "a", TTL));

    store.release(first);

    assertThat(store.read(election).orElseThrow().token()).isEqualTo(second.token());
  }

  @Test
  void readShowsHolderTokenTtlAndTimeLeft() {
    EtcdLeaseStore store = store();
    assertThat(store.read(election)).isEmpty();
    Lease a = granted(store.tryAcquire(election, "a", TTL));

    LeaseRecord record = store().read(election).orElseThrow();

    assertThat(record.holder()).isEqualTo("a");
    assertThat(record.token()).isEqualTo(a.token());
    assertThat(record.ttl()).isEqualTo(a.ttl());
    assertThat(record.renewedAt()).isEmpty();
    assertThat(record.expiresIn().orElseThrow()).isPositive().isLessThanOrEqualTo(TTL);
  }

  @Test
  void watchFiresOnReleaseAndOnExpiry() {
    EtcdLeaseStore store = store();
    AtomicInteger changes = new AtomicInteger();
    Subscription watch = store().watch(election, changes::incrementAndGet).orElseThrow();
    toClose.add(watch);
    assertThat(store.watchReportsExpiry()).isTrue();
    awaitConfirmed(changes);

    Lease a = granted(store.tryAcquire(election, "a", TTL));
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 2);
    store.release(a);
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 3);

    granted(store.tryAcquire(election, "b", SHORT_TTL));
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 4);
    int beforeExpiry = changes.get();
    // b stops renewing; the watch must report etcd's deletion without anyone polling.
    await().atMost(Duration.ofSeconds(15)).until(() -> changes.get() > beforeExpiry);
    assertThat(store.tryAcquire(election, "c", TTL).isGranted()).isTrue();
  }

  @Test
  void aClosedWatchStopsCallingBack() {
    EtcdLeaseStore store = store();
    AtomicInteger changes = new AtomicInteger();
    Subscription watch = store.watch(election, changes::incrementAndGet).orElseThrow();
    awaitConfirmed(changes);
    Lease a = granted(store.tryAcquire(election, "a", TTL));
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 2);

    watch.close();
    watch.close();
    int afterClose = changes.get();
    store.release(a);
    // A later event on another watch proves the release's event was delivered by now.
    AtomicInteger other = new AtomicInteger();
    toClose.add(store.watch(election, other::incrementAndGet).orElseThrow());
    awaitConfirmed(other);
    granted(store.tryAcquire(election, "b", TTL));
    await().atMost(Duration.ofSeconds(20)).until(() -> other.get() >= 2);

    assertThat(changes.get()).isEqualTo(afterClose);
  }

  @Test
  void withSharedLeasesElectionsWithTheSameTtlShareOneEtcdLeaseAndOneKeepAlive() throws Exception {
    Duration sharing = Duration.ofSeconds(1);
    EtcdLeaseStore store = EtcdLeaseStore.builder(client).sharedLeases(sharing).build();
    toClose.add(store);
    Set<Long> before = new HashSet<>(etcd.leaseIds());
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      leases.add(granted(store.tryAcquire(election + "-" + i, "a", TTL)));
    }

    Set<Long> created = new HashSet<>(etcd.leaseIds());
    created.removeAll(before);
    assertThat(created).hasSize(1);
    assertThat(leases)
        .extracting(Lease::handle)
        .containsOnly(Long.toString(created.iterator().next()));

    int keepAlivesBefore = keepAlivesSent.get();
    long started = System.nanoTime();
    for (Lease lease : leases) {
      store.renew(lease);
    }
    long sharingWindowsElapsed = (System.nanoTime() - started) / sharing.toNanos() + 1;
    assertThat(keepAlivesSent.get() - keepAlivesBefore)
        .as("one keep-alive per sharing window, not one per renewal")
        .isLessThanOrEqualTo((int) sharingWindowsElapsed);

    for (Lease lease : leases.subList(0, 99)) {
      store.release(lease);
    }
    long shared = created.iterator().next();
    assertThat(etcd.leaseIds()).contains(shared);
    store.renew(leases.get(99));
    store.release(leases.get(99));
    await().atMost(Duration.ofSeconds(20)).until(() -> !etcd.leaseIds().contains(shared));
  }

  @Test
  void aFollowerKeepsNoEtcdLeaseAliveWhileTheElectionIsHeld() {
    granted(store().tryAcquire(election, "a", TTL));
    EtcdLeaseStore follower = store();
    Set<Long> before = new HashSet<>(etcd.leaseIds());
    int keepAlivesBefore = keepAlivesSent.get();

    for (int i = 0; i < 3; i++) {
      assertThat(follower.tryAcquire(election, "b", TTL).isGranted()).isFalse();
    }

    // Knowing nothing of the key, the first attempt grants one lease while it reads the key, as
    // the spare for a later acquisition; nothing renews it. Earlier tests' leases may expire
    // meanwhile.
    Set<Long> added = new HashSet<>(etcd.leaseIds());
    added.removeAll(before);
    assertThat(added).as("leases granted by the follower").hasSizeLessThanOrEqualTo(1);
    assertThat(keepAlivesSent.get()).as("keep-alives sent").isEqualTo(keepAlivesBefore);
  }

  @Test
  void concurrentRenewalsOfManyElectionsAllSucceed() throws Exception {
    EtcdLeaseStore store = store();
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      leases.add(granted(store.tryAcquire(election + "-" + i, "a", TTL)));
    }
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<Lease>> renewed = new ArrayList<>();
      for (Lease lease : leases) {
        renewed.add(pool.submit(() -> store.renew(lease)));
      }
      for (int i = 0; i < leases.size(); i++) {
        assertThat(renewed.get(i).get(10, TimeUnit.SECONDS).token())
            .isEqualTo(leases.get(i).token());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aGuardedWriteOfAStaleLeaderIsRefusedAfterTakeover() throws Exception {
    EtcdLeaseStore store = store();
    ByteSequence data = bytes("/baton-test/data/" + election);
    Lease a = granted(store.tryAcquire(election, "a", SHORT_TTL));
    store.guarded(a, List.of(Op.put(data, bytes("written by a"), PutOption.DEFAULT)));

    await().atMost(Duration.ofSeconds(15)).until(() -> store.read(election).isEmpty());
    Lease b = granted(store.tryAcquire(election, "b", TTL));

    assertThatThrownBy(
            () ->
                store.guarded(
                    a, List.of(Op.put(data, bytes("stale write by a"), PutOption.DEFAULT))))
        .isInstanceOfSatisfying(
            LeaseLostException.class, e -> assertThat(e.holder()).contains("b"));
    assertThat(
            client
                .getKVClient()
                .get(data)
                .get(5, TimeUnit.SECONDS)
                .getKvs()
                .get(0)
                .getValue()
                .toString(UTF_8))
        .isEqualTo("written by a");
    store.guarded(b, List.of(Op.put(data, bytes("written by b"), PutOption.DEFAULT)));
    assertThat(
            client
                .getKVClient()
                .get(data)
                .get(5, TimeUnit.SECONDS)
                .getKvs()
                .get(0)
                .getValue()
                .toString(UTF_8))
        .isEqualTo("written by b");
  }

  @Test
  void anUnreachableEtcdIsAStoreErrorWithinTheCallTimeoutNotAHang() {
    Duration callTimeout = Duration.ofSeconds(1);
    try (Client nowhere = Client.builder().endpoints("http://127.0.0.1:" + closedPort()).build()) {
      EtcdLeaseStore store = EtcdLeaseStore.builder(nowhere).callTimeout(callTimeout).build();
      toClose.add(store);

      assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () -> {
            assertThatThrownBy(() -> store.tryAcquire(election, "a", TTL))
                .isInstanceOf(LeaseStoreException.class);
            assertThatThrownBy(() -> store.read(election)).isInstanceOf(LeaseStoreException.class);
          });
    }
  }

  /**
   * jetcd waits for a ready connection before it sends a watch, without a word, so a watch begun
   * while etcd cannot be reached would leave its follower silent for the whole outage. The store
   * tells the follower instead, so that it looks for itself (and, failing, polls).
   */
  @Test
  void aWatchEtcdDoesNotConfirmWithinTheCallTimeoutTellsTheFollowerToLook() {
    Duration callTimeout = Duration.ofMillis(500);
    try (Client nowhere = Client.builder().endpoints("http://127.0.0.1:" + closedPort()).build()) {
      EtcdLeaseStore store = EtcdLeaseStore.builder(nowhere).callTimeout(callTimeout).build();
      toClose.add(store);
      AtomicInteger changes = new AtomicInteger();
      Subscription watch = store.watch(election, changes::incrementAndGet).orElseThrow();
      toClose.add(watch);

      await("until the unconfirmed watch tells its follower")
          .atMost(Duration.ofSeconds(20))
          .until(() -> changes.get() >= 1);
    }
  }

  /**
   * A watch that broke is resumed by jetcd, which again waits for a ready connection without a
   * word: when etcd stays out of reach, the follower hears from the store a second time.
   */
  @Test
  void aBrokenWatchEtcdDoesNotConfirmAgainTellsTheFollowerAgain() {
    FaultProxy proxy = FaultProxy.start(etcd.clientAddresses().get(0));
    toClose.add(proxy);
    try (Client through = Client.builder().endpoints("http://127.0.0.1:" + proxy.port()).build()) {
      EtcdLeaseStore store =
          EtcdLeaseStore.builder(through).callTimeout(Duration.ofMillis(500)).build();
      toClose.add(store);
      AtomicInteger changes = new AtomicInteger();
      Subscription watch = store.watch(election, changes::incrementAndGet).orElseThrow();
      toClose.add(watch);
      awaitConfirmed(changes);
      int confirmed = changes.get();

      proxy.cut();

      await("until the watch tells its follower it broke")
          .atMost(Duration.ofSeconds(20))
          .until(() -> changes.get() >= confirmed + 1);
      await("until the watch tells its follower that it could not be resumed")
          .atMost(Duration.ofSeconds(20))
          .until(() -> changes.get() >= confirmed + 2);
    }
  }

  @Test
  void aStoreClosedWhileItsReleaseIsUnansweredLeavesTheLeaseToTheCandidateThatTookItOver()
      throws Exception {
    FaultProxy proxy = FaultProxy.start(etcd.clientAddresses().get(0));
    toClose.add(proxy);
    Client through = Client.builder().endpoints("http://127.0.0.1:" + proxy.port()).build();
    toClose.add(through);
    EtcdLeaseStore leaving =
        EtcdLeaseStore.builder(through).callTimeout(Duration.ofSeconds(5)).build();
    EtcdLeaseStore next = store();
    toClose.add(next);
    Lease held = granted(leaving.tryAcquire(election, "a", TTL));

    proxy.stopReadingAnswers(); // the release applies; its answer is held back
    CompletableFuture<Void> release = CompletableFuture.runAsync(() -> leaving.release(held));
    Lease taken =
        await("until the next candidate takes the released lease over")
            .atMost(Duration.ofSeconds(20))
            .until(() -> next.tryAcquire(election, "b", TTL).lease(), Optional::isPresent)
            .orElseThrow();
    assertThat(taken.handle()).as("the etcd lease taken over").isEqualTo(held.handle());
    // Closing sends its revocations while the release still waits for its answer (a shutdown
    // hook closing the store beside the elector's release); it waits for their answers in vain.
    leaving.close();
    proxy.heal();
    release.handle((done, failed) -> null).get(20, TimeUnit.SECONDS);

    assertThat(next.renew(taken).token()).isEqualTo(taken.token());
    assertThat(electionKey(election).getValue()).isEqualTo(bytes("b"));
  }

  @Test
  void anElectorClosedAfterAGrantWithNoAnswerHandsOverAtOnce() throws Exception {
    FaultProxy proxy = FaultProxy.start(etcd.clientAddresses().get(0));
    toClose.add(proxy);
    // Only the transaction that grants has its answer held: the read and the lease grant before it
    // are answered.
    AtomicReference<Runnable> atNextTxn = new AtomicReference<>();
    ClientInterceptor holdAtTxn =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel channel) {
            if (method.getFullMethodName().equals("etcdserverpb.KV/Txn")) {
              Runnable hold = atNextTxn.getAndSet(null);
              if (hold != null) {
                hold.run();
              }
            }
            return channel.newCall(method, options);
          }
        };
    Client through =
        Client.builder()
            .endpoints("http://127.0.0.1:" + proxy.port())
            .interceptor(holdAtTxn)
            .build();
    toClose.add(through);
    EtcdLeaseStore a = EtcdLeaseStore.builder(through).callTimeout(Duration.ofSeconds(1)).build();
    toClose.add(a);
    EtcdLeaseStore b = store();
    toClose.add(b);

    StopAfterUnansweredGrant.Handover handover =
        StopAfterUnansweredGrant.run(
            a,
            () -> atNextTxn.set(proxy::stopReadingAnswers),
            proxy,
            b,
            election,
            Duration.ofSeconds(30),
            () -> {
              List<KeyValue> kvs =
                  client
                      .getKVClient()
                      .get(bytes(EtcdLeaseStore.DEFAULT_PREFIX + election))
                      .orTimeout(5, TimeUnit.SECONDS)
                      .join()
                      .getKvs();
              return kvs.size() == 1 && kvs.get(0).getValue().equals(bytes("a"));
            });
    System.out.println(
        "etcd: elector closed after a grant with no answer, another store granted: "
            + handover.closeToGrant().toMillis()
            + " ms (lease 30 s)");
    assertThat(electionKey(election).getValue()).isEqualTo(bytes("b"));
  }

  @Test
  void manyThreadsHammeringOneElectionNeverSeeTwoHolders() throws Exception {
    // Three stores (processes) on their own clients, four candidates each.
    List<EtcdLeaseStore> stores = new ArrayList<>();
    for (int s = 0; s < 3; s++) {
      Client own = Client.builder().endpoints(etcd.endpoints()).build();
      toClose.add(own);
      stores.add(store(own));
    }
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicLong highestToken = new AtomicLong();
    AtomicInteger tokensOutOfOrder = new AtomicInteger();
    AtomicInteger grants = new AtomicInteger();
    List<Throwable> unexpected = new CopyOnWriteArrayList<>();
    long end = System.nanoTime() + Duration.ofSeconds(8).toNanos();
    ExecutorService pool = Executors.newFixedThreadPool(12);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 12; t++) {
        EtcdLeaseStore store = stores.get(t % 3);
        String candidate = "c" + t;
        workers.add(
            pool.submit(
                () -> {
                  while (System.nanoTime() - end < 0) {
                    try {
                      Acquisition acquisition = store.tryAcquire(election, candidate, SHORT_TTL);
                      if (acquisition.lease().isEmpty()) {
                        continue;
                      }
                      Lease lease = acquisition.lease().get();
                      if (holders.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      grants.incrementAndGet();
                      if (lease.token().value()
                          <= highestToken.getAndAccumulate(lease.token().value(), Math::max)) {
                        tokensOutOfOrder.incrementAndGet();
                      }
                      store.renew(lease);
                      holders.decrementAndGet();
                      store.release(lease);
                    } catch (LeaseStoreException | LeaseLostException e) {
                      unexpected.add(e);
                      return;
                    }
                  }
                }));
      }
      for (Future<?> worker : workers) {
        worker.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(unexpected).isEmpty();
    assertThat(grants.get()).isGreaterThan(12);
    assertThat(overlaps.get()).isZero();
    assertThat(tokensOutOfOrder.get()).isZero();
  }

  /**
   * A new watch calls back once when etcd confirms it; changes are certain to be seen after that.
   */
  private static void awaitConfirmed(AtomicInteger changes) {
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.get() >= 1);
  }

  static int closedPort() {
    try (java.net.ServerSocket socket =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
