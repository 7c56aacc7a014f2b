package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import io.etcd.jetcd.ByteSequence;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Batched renewals on a cluster that takes bigger transactions than etcd's default ({@code
 * --max-txn-ops=1024}): the store confirms as many keys per transaction as it is told the cluster
 * takes, still finds the one key changed among them, and says which setting is wrong when it is
 * told more than the cluster takes.
 */
class EtcdMaxTxnOpsIT extends EtcdClusterIT {

  private static final Duration TTL = Duration.ofSeconds(15);
  private static final AtomicInteger transactions = new AtomicInteger();

  @BeforeAll
  static void startOneMemberTaking1024OperationsPerTransaction() {
    startCluster(
        1,
        b -> b.interceptor(countCalls("etcdserverpb.KV/Txn", transactions)),
        "--max-txn-ops=1024");
  }

  private EtcdLeaseStore sharedLeases(int maxTxnOps) {
    EtcdLeaseStore store =
        EtcdLeaseStore.builder(client).sharedLeases(Duration.ZERO).maxTxnOps(maxTxnOps).build();
    toClose.add(store);
    return store;
  }

  /** {@code n} elections granted to {@code store}, a few at a time. */
  private List<Lease> leading(EtcdLeaseStore store, int n) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Lease>> granted = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String name = election + "-" + i;
        granted.add(pool.submit(() -> granted(store.tryAcquire(name, "a", TTL))));
      }
      List<Lease> leases = new ArrayList<>();
      for (Future<Lease> f : granted) {
        leases.add(f.get(30, TimeUnit.SECONDS));
      }
      return leases;
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aThousandRenewalsConfirmTheirKeysInOneTransactionWhereTheClusterTakesIt() throws Exception {
    EtcdLeaseStore store = sharedLeases(1024);
    List<Lease> big = leading(store, 1000);
    EtcdLeaseStore byDefault = sharedLeases(EtcdLeaseStore.DEFAULT_MAX_TXN_OPS);
    List<Lease> small = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      small.add(granted(byDefault.tryAcquire(election + "-default-" + i, "a", TTL)));
    }

    int before = transactions.get();
    List<Renewal> renewed = store.renewAll(big);
    assertThat(transactions.get() - before).as("transactions for 1,000 renewals").isEqualTo(1);
    assertThat(renewed).hasSize(1000).allMatch(Renewal::isRenewed);

    before = transactions.get();
    assertThat(byDefault.renewAll(small)).hasSize(200).allMatch(Renewal::isRenewed);
    assertThat(transactions.get() - before)
        .as("transactions for 200 renewals at etcd's default of 128 operations")
        .isEqualTo(2);
  }

  @Test
  void theOneKeyChangedAmongAThousandIsLostAndTheOthersAreRenewed() throws Exception {
    EtcdLeaseStore store = sharedLeases(1024);
    List<Lease> leases = leading(store, 1000);
    Lease taken = leases.get(500);
    client
        .getKVClient()
        .put(
            ByteSequence.from(EtcdLeaseStore.DEFAULT_PREFIX + taken.election(), UTF_8),
            ByteSequence.from("intruder", UTF_8))
        .get(5, TimeUnit.SECONDS);

    List<Renewal> renewed = store.renewAll(leases);

    assertThat(renewed.get(500).failure())
        .get()
        .isInstanceOf(LeaseLostException.class)
        .extracting(Throwable::getMessage)
        .asString()
        .contains("intruder");
    for (int i = 0; i < leases.size(); i++) {
      if (i != 500) {
        assertThat(renewed.get(i).isRenewed()).as("renewal %d: %s", i, renewed.get(i)).isTrue();
      }
    }
  }

  @Test
  void moreOperationsThanTheClusterTakesFailsTheRenewalsNamingTheSetting() throws Exception {
    EtcdLeaseStore store = sharedLeases(2048);
    List<Lease> leases = leading(store, 1100);

    List<Renewal> renewed = store.renewAll(leases);

    assertThat(renewed).hasSize(1100).noneMatch(Renewal::isRenewed);
    assertThat(renewed.get(0).failure())
        .get()
        .isInstanceOf(LeaseStoreException.class)
        .extracting(Throwable::getMessage)
        .asString()
        .contains("up to 2048 operations")
        .contains(EtcdLeaseStoreProvider.MAX_TXN_OPS)
        .contains("--max-txn-ops");
  }
}
