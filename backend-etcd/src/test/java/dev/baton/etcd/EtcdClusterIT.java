package dev.baton.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.CloseAtEnd;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.testservers.EtcdCluster;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.util.concurrent.atomic.AtomicInteger;
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

  final CloseAtEnd toClose = new CloseAtEnd();
  String election;

  /** Starts a cluster of {@code members} and the shared client, built as {@code configure} says. */
  static void startCluster(int members, UnaryOperator<ClientBuilder> configure) {
    startCluster(members, configure, new String[0]);
  }

  /** As {@link #startCluster(int, UnaryOperator)}, each member started with {@code serverArgs}. */
  static void startCluster(
      int members, UnaryOperator<ClientBuilder> configure, String... serverArgs) {
    EtcdCluster.requireBinary();
    etcd = EtcdCluster.start(members, serverArgs);
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
    toClose.close();
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

  /** Counts calls of one gRPC method made through a client. */
  static ClientInterceptor countCalls(String fullMethodName, AtomicInteger counter) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        if (method.getFullMethodName().equals(fullMethodName)) {
          counter.incrementAndGet();
        }
        return next.newCall(method, options);
      }
    };
  }
}
