package dev.baton.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.testservers.EtcdCluster;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What the store-level etcd ITs share: a cluster per test class (started by the class's own
 * {@code @BeforeAll} through {@link #startCluster}) with one client on it, an election of its own
 * for every test, and closing what a test opened, newest first, so that stores close before the
 * clients they were built on. Test classes run one after another, so the statics are the running
 * class's.
 */
abstract class EtcdClusterIT {

  static EtcdCluster etcd;
  static Client client;

  final List<AutoCloseable> toClose = new ArrayList<>();
  String election;

  /** Starts a cluster of {@code members} and the shared client, built as {@code configure} says. */
  static void startCluster(int members, UnaryOperator<ClientBuilder> configure) {
    EtcdCluster.requireBinary();
    etcd = EtcdCluster.start(members);
    client = configure.apply(Client.builder().endpoints(etcd.endpoints())).build();
  }

  @AfterAll
  static void stopCluster() {
    if (client != null) {
      client.close();
      client = null;
    }
    if (etcd != null) {
      etcd.close();
      etcd = null;
    }
  }

  @BeforeEach
  void uniqueElection(TestInfo test) {
    election = test.getTestMethod().orElseThrow().getName() + "-" + System.nanoTime();
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  /** A store with the default settings on {@code on}, closed after the test. */
  EtcdLeaseStore store(Client on) {
    EtcdLeaseStore store = EtcdLeaseStore.builder(on).build();
    toClose.add(store);
    return store;
  }

  static Lease granted(Acquisition acquisition) {
    assertThat(acquisition.isGranted()).as("granted: %s", acquisition).isTrue();
    return acquisition.lease().orElseThrow();
  }
}
