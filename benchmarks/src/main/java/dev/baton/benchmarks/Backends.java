package dev.baton.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.azureblob.AzureBlobLeaseStoreProvider;
import dev.baton.conformance.FaultyLeaseStore;
import dev.baton.conformance.NpmServer;
import dev.baton.consul.ConsulLeaseStoreProvider;
import dev.baton.dynamodb.DynamoDbLeaseStore;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.MemoryLeaseStore;
import dev.baton.etcd.EtcdLeaseStore;
import dev.baton.jdbc.JdbcLeaseStore;
import dev.baton.kubernetes.KubernetesLeaseStore;
import dev.baton.testservers.ConsulServers;
import dev.baton.testservers.H2TcpServer;
import dev.baton.zookeeper.ZooKeeperLeaseStore;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Baton on each backend, every node's client built the way the backend's provider builds it from
 * properties (the settings a user gets), but connected through the node's own proxy.
 */
final class Backends {

  static final String JDBC_TABLE = "baton_bench_lease";
  static final String ZOOKEEPER_BASE_PATH = "/baton-bench";
  static final String ETCD_PREFIX = "/baton-bench/";
  static final String K8S_NAMESPACE = "bench";
  static final String DYNAMODB_TABLE = "baton-bench";
  static final String AZURE_CONTAINER = "baton-bench";

  /** Azurite's well-known development account key, published in its README (no secret). */
  private static final String AZURITE_KEY =
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

  private static final AtomicInteger POOLS = new AtomicInteger();

  private Backends() {}

  static BatonContender memory(Settings s) {
    MemoryLeaseStore shared = new MemoryLeaseStore();
    return new BatonContender(
        "memory",
        "this JVM (MemoryLeaseStore)",
        Optional.empty(),
        s,
        Map.of(
            "link",
            "no network: a cut makes every call of the node fail at once (FaultyLeaseStore)"),
        "LeaseStore calls (no server)",
        s.leaseDuration(),
        (node, through) -> {
          FaultyLeaseStore view = new FaultyLeaseStore(shared, s.callTimeout());
          return new BatonContender.OpenedStore(view, null, Optional.empty(), Optional.of(view));
        },
        shared);
  }

  static BatonContender h2(Settings s, H2TcpServer h2) {
    return jdbc(
        "H2",
        "H2 " + H2TcpServer.version() + " (TCP server, in-memory database)",
        h2.address(),
        s,
        Backends::h2Url,
        "sa");
  }

  /** The benchmarks' in-memory H2 database, which {@link Servers#h2} holds open. */
  static final String H2_DATABASE = "mem:baton-bench";

  static String h2Url(int port) {
    return H2TcpServer.url(port, H2_DATABASE);
  }

  static BatonContender postgres(Settings s, String version) {
    BatonContender.OpenedStore operator =
        openJdbc(Servers.postgresUrl(Servers.POSTGRES.getPort()), Servers.POSTGRES_USER, s);
    return jdbc(
            "PostgreSQL",
            version + " at 127.0.0.1:5432",
            Servers.POSTGRES,
            s,
            Servers::postgresUrl,
            Servers.POSTGRES_USER)
        .withRevoker(
            "another process releasing it (a row deleted by hand notifies nobody)",
            election -> releaseBehindItsBack(operator.store(), election),
            () -> {
              try (AutoCloseable pool = operator.resources()) {
                operator.store().close();
              }
            });
  }

  /**
   * Releases whatever lease the election has, through a store of another process: PostgreSQL
   * notifies the release, which is what a leader hears. A row deleted by hand notifies nobody.
   */
  private static void releaseBehindItsBack(LeaseStore operator, String election) {
    operator
        .read(election)
        .ifPresent(
            r ->
                operator.release(
                    new Lease(
                        election, r.holder(), r.token(), java.time.Duration.ofSeconds(1), "")));
  }

  static BatonContender mariadb(Settings s, String version) {
    return jdbc(
        "MariaDB",
        version + " at 127.0.0.1:3306",
        Servers.MARIADB,
        s,
        Servers::mariadbUrl,
        Servers.MARIADB_USER);
  }

  private static BatonContender jdbc(
      String name,
      String server,
      InetSocketAddress address,
      Settings s,
      IntFunction<String> urlOnPort,
      String user) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("call timeout", s.callTimeout().toMillis() + " ms");
    settings.put(
        "pool",
        "HikariCP, 4 connections, 2 idle (on PostgreSQL one holds the LISTEN), connection timeout = call timeout (as the jdbc provider builds it)");
    settings.put("table", JDBC_TABLE);
    return new BatonContender(
        name,
        server,
        Optional.of(address),
        s,
        settings,
        "JDBC round trips at the driver (statements, commits, rollbacks, validity checks, including the pool's)",
        s.leaseDuration(),
        (node, through) -> openJdbc(urlOnPort.apply(through.orElseThrow().port()), user, s),
        null);
  }

  /** A JDBC store on a pool over counting connections; requests are the driver's round trips. */
  static BatonContender.OpenedStore openJdbc(String url, String user, Settings s) {
    CountingDataSource counting = new CountingDataSource(url, user, "");
    HikariDataSource pool = jdbcPool(counting, s.callTimeout(), 4);
    LeaseStore store =
        JdbcLeaseStore.builder(pool).table(JDBC_TABLE).callTimeout(s.callTimeout()).build();
    return new BatonContender.OpenedStore(
        store, pool, Optional.of(counting::roundTrips), Optional.empty());
  }

  /** The pool {@code JdbcLeaseStoreProvider} builds: small, waits at most the call timeout. */
  static HikariDataSource jdbcPool(
      javax.sql.DataSource dataSource, Duration callTimeout, int size) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("baton-bench-" + POOLS.incrementAndGet());
    config.setDataSource(dataSource);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(2);
    long timeoutMillis = Math.max(250, callTimeout.toMillis());
    config.setConnectionTimeout(timeoutMillis);
    config.setValidationTimeout(Math.max(250, timeoutMillis / 2));
    config.setInitializationFailTimeout(-1);
    return new HikariDataSource(config);
  }

  static BatonContender zookeeper(Settings s, ZooKeeperServerInJvm zk) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("session timeout (the lease)", s.leaseDuration().toMillis() + " ms");
    settings.put("call timeout", s.callTimeout().toMillis() + " ms");
    settings.put(
        "Curator",
        "connection timeout = session timeout, BoundedExponentialBackoffRetry(100 ms, 1 s, 3) (as the zookeeper provider builds it)");
    settings.put("server tickTime", ZooKeeperServerInJvm.TICK_MILLIS + " ms");
    CuratorFramework operator = curatorForBaton(zk.address(), s.leaseDuration());
    return new BatonContender(
            "ZooKeeper",
            "ZooKeeper " + zk.version() + " in this JVM",
            Optional.of(zk.address()),
            s,
            settings,
            "packets the ZooKeeper server received on the node's session (requests and pings)",
            s.leaseDuration(),
            (node, through) -> {
              // Tapped before the client connects: the reader needs each connection from its start.
              WireLog wire = ZooKeeperWire.tapping(through.orElseThrow());
              CuratorFramework client =
                  curatorForBaton(through.orElseThrow().address(), s.leaseDuration());
              return new BatonContender.OpenedStore(
                  zooKeeperStore(client, s),
                  client,
                  Optional.of(sessionPackets(zk, client)),
                  Optional.empty(),
                  Optional.of(wire));
            },
            null)
        .withRevoker("deleting the holder's node", zooKeeperRevoker(operator), operator);
  }

  /** Deletes the first node in an election's line, the holder's, with a session of its own. */
  private static BatonContender.Revoker zooKeeperRevoker(CuratorFramework operator) {
    return election -> {
      String path = ZOOKEEPER_BASE_PATH + "/" + election;
      if (operator.checkExists().forPath(path) == null) {
        return; // the warm-up
      }
      Optional<String> holder =
          operator.getChildren().forPath(path).stream()
              .filter(n -> n.startsWith("c-"))
              .min(java.util.Comparator.naturalOrder());
      if (holder.isPresent()) {
        operator.delete().forPath(path + "/" + holder.get());
      }
    };
  }

  static LeaseStore zooKeeperStore(CuratorFramework client, Settings s) {
    return ZooKeeperLeaseStore.builder(client)
        .basePath(ZOOKEEPER_BASE_PATH)
        .callTimeout(s.callTimeout())
        .build();
  }

  static CuratorFramework curatorForBaton(InetSocketAddress through, Duration session) {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString("127.0.0.1:" + through.getPort())
            .sessionTimeoutMs((int) session.toMillis())
            .connectionTimeoutMs((int) session.toMillis())
            .retryPolicy(new BoundedExponentialBackoffRetry(100, 1_000, 3))
            .build();
    client.start();
    return client;
  }

  /** Packets the server received on the client's current session; 0 before it has one. */
  static LongSupplier sessionPackets(ZooKeeperServerInJvm zk, CuratorFramework client) {
    return () -> {
      try {
        return zk.packetsReceivedFrom(client.getZookeeperClient().getZooKeeper().getSessionId());
      } catch (Exception e) {
        return 0;
      }
    };
  }

  static BatonContender etcd(Settings s, EtcdServer etcd, String version) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("call timeout", s.callTimeout().toMillis() + " ms");
    settings.put(
        "etcd leases",
        "one per election (default), granted "
            + (s.leaseDuration().toMillis() + 999) / 1000
            + " s for a "
            + s.leaseDuration().toMillis()
            + " ms lease; a release hands its lease to the next holder");
    settings.put("jetcd client", "defaults (as the etcd provider builds it)");
    Client operator =
        Client.builder().endpoints("http://127.0.0.1:" + etcd.address().getPort()).build();
    return new BatonContender(
            "etcd",
            "etcd " + version + ", one member, --max-txn-ops=" + EtcdServer.MAX_TXN_OPS,
            Optional.of(etcd.address()),
            s,
            settings,
            "gRPC request messages the client sent (unary calls, keep-alive and watch stream messages)",
            s.leaseDuration(),
            (node, through) -> openEtcd(through.orElseThrow().address(), s),
            null)
        .withRevoker("deleting the key", etcdRevoker(operator), operator);
  }

  /** Deletes an election's key with a client of the operator's own, straight to the member. */
  private static BatonContender.Revoker etcdRevoker(Client operator) {
    return election ->
        operator
            .getKVClient()
            .delete(ByteSequence.from(ETCD_PREFIX + election, StandardCharsets.UTF_8))
            .get(30, TimeUnit.SECONDS);
  }

  static BatonContender.OpenedStore openEtcd(InetSocketAddress through, Settings s) {
    return openEtcd(through, s, false, EtcdLeaseStore.DEFAULT_MAX_TXN_OPS);
  }

  /**
   * @param sharedLeases all elections on one etcd lease of exactly the TTL (docs/etcd.md's setting
   *     for a process that leads hundreds of elections or more), instead of one etcd lease each
   * @param maxTxnOps {@code election.etcd.max-txn-ops}: at most the server's {@code --max-txn-ops}
   */
  static BatonContender.OpenedStore openEtcd(
      InetSocketAddress through, Settings s, boolean sharedLeases, int maxTxnOps) {
    GrpcRequestCounter counter = new GrpcRequestCounter();
    Client client =
        Client.builder()
            .endpoints("http://127.0.0.1:" + through.getPort())
            .interceptor(counter)
            .build();
    EtcdLeaseStore.Builder builder =
        EtcdLeaseStore.builder(client)
            .prefix(ETCD_PREFIX)
            .callTimeout(s.callTimeout())
            .maxTxnOps(maxTxnOps);
    if (sharedLeases) {
      builder.sharedLeases(Duration.ZERO);
    }
    return new BatonContender.OpenedStore(
        builder.build(),
        client,
        Optional.of(counter::messages),
        Optional.empty(),
        Optional.of(counter.log()));
  }

  static BatonContender kubernetes(Settings s, KubernetesMock mock) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("call timeout", s.callTimeout().toMillis() + " ms");
    settings.put(
        "fabric8 client",
        "request and connection timeout = call timeout, retries off (as the kubernetes provider builds it)");
    settings.put("namespace", K8S_NAMESPACE);
    KubernetesClient operator =
        new KubernetesClientBuilder()
            .withConfig(kubernetesConfig(mock.address(), "baton-bench-operator"))
            .build();
    return new BatonContender(
            "Kubernetes",
            "fabric8 Kubernetes mock API server (CRUD mode) in this JVM",
            Optional.of(mock.address()),
            s,
            settings,
            "HTTP requests the API server received from the node (by User-Agent)",
            s.leaseDuration(),
            (node, through) ->
                openKubernetes(
                    through.orElseThrow().address(),
                    node,
                    s,
                    Optional.of(() -> mock.requestsFrom(node))),
            null)
        .withRevoker(
            "deleting the Lease object",
            election -> operator.leases().inNamespace(K8S_NAMESPACE).withName(election).delete(),
            operator);
  }

  static BatonContender.OpenedStore openKubernetes(
      InetSocketAddress through, String node, Settings s, Optional<LongSupplier> requests) {
    Config config = kubernetesConfig(through, node);
    int millis = (int) s.callTimeout().toMillis();
    config.setRequestTimeout(millis);
    config.setConnectionTimeout(millis);
    config.setRequestRetryBackoffLimit(0);
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    LeaseStore store =
        KubernetesLeaseStore.builder(client)
            .namespace(K8S_NAMESPACE)
            .callTimeout(s.callTimeout())
            .build();
    return new BatonContender.OpenedStore(store, client, requests, Optional.empty());
  }

  /**
   * A client configuration for the mock through {@code through}, with nothing read from the
   * machine.
   */
  static Config kubernetesConfig(InetSocketAddress through, String userAgent) {
    Config config = Config.empty();
    config.setMasterUrl("http://127.0.0.1:" + through.getPort());
    config.setNamespace(K8S_NAMESPACE);
    config.setUserAgent(userAgent);
    return config;
  }

  static BatonContender dynamodb(Settings s, NpmServer dynalite) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("call timeout", s.callTimeout().toMillis() + " ms");
    settings.put(
        "AWS SDK client",
        "url-connection-client, connect and socket timeout = call timeout, no retries"
            + " (as the dynamodb provider builds it)");
    settings.put("table", DYNAMODB_TABLE + " (created by the first store)");
    return new BatonContender(
        "DynamoDB",
        "dynalite (npm), in memory",
        Optional.of(dynalite.address()),
        s,
        settings,
        "HTTP requests the SDK sent",
        s.leaseDuration(),
        (node, through) -> openDynamoDb(through.orElseThrow().address(), s),
        null);
  }

  static BatonContender.OpenedStore openDynamoDb(InetSocketAddress through, Settings s) {
    AtomicLong requests = new AtomicLong();
    DynamoDbClient client =
        DynamoDbClient.builder()
            .endpointOverride(URI.create("http://127.0.0.1:" + through.getPort()))
            .region(Region.US_EAST_1)
            .credentialsProvider(
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create("baton-bench", "baton-bench")))
            .httpClientBuilder(
                UrlConnectionHttpClient.builder()
                    .connectionTimeout(s.callTimeout())
                    .socketTimeout(s.callTimeout()))
            .overrideConfiguration(
                c ->
                    c.retryStrategy(AwsRetryStrategy.doNotRetry())
                        .addExecutionInterceptor(
                            new ExecutionInterceptor() {
                              @Override
                              public void beforeTransmission(
                                  Context.BeforeTransmission context,
                                  ExecutionAttributes attributes) {
                                requests.incrementAndGet();
                              }
                            }))
            .build();
    LeaseStore store =
        DynamoDbLeaseStore.builder(client)
            .table(DYNAMODB_TABLE)
            .callTimeout(s.callTimeout())
            .createTable(true)
            .build();
    return new BatonContender.OpenedStore(
        store, client, Optional.of(requests::get), Optional.empty());
  }

  /**
   * Azure grants leases of 15 s to 60 s only: this contender runs with the elector's defaults
   * (lease 15 s, renew deadline 10 s, retry 2 s, call timeout 3 s), not the run's shorter lease.
   */
  static BatonContender consul(Settings s, ConsulServers consul) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("call timeout", s.callTimeout().toMillis() + " ms");
    settings.put(
        "Consul session",
        "one per store, TTL = the lease, Behavior=release, LockDelay=0s, no checks; Consul"
            + " invalidates it 1 to 2 TTLs after its last renewal");
    settings.put(
        "consul-client",
        "connect, read and write timeout = call timeout, no ping (as the consul provider builds it)");
    return new BatonContender(
        "Consul",
        "Consul 1.8.7 dev agent (one server, in memory, session_ttl_min=1s)",
        Optional.of(consul.agent(0).httpAddress()),
        s,
        settings,
        "LeaseStore calls (no server-side count; a renewal is two HTTP requests, a grant two or three)",
        s.leaseDuration(),
        (node, through) -> openConsul(through.orElseThrow().address(), s),
        null);
  }

  static BatonContender.OpenedStore openConsul(InetSocketAddress through, Settings s) {
    Properties p = new Properties();
    p.setProperty(ConsulLeaseStoreProvider.URL, "http://127.0.0.1:" + through.getPort());
    p.setProperty(ConsulLeaseStoreProvider.CALL_TIMEOUT, s.callTimeout().toMillis() + "ms");
    p.setProperty(ElectionProperties.RENEW_DEADLINE, s.renewDeadline().toMillis() + "ms");
    LeaseStore store = new ConsulLeaseStoreProvider().open(ElectionProperties.of(p));
    return new BatonContender.OpenedStore(store, null, Optional.empty(), Optional.empty());
  }

  static BatonContender azureBlob(Settings run, NpmServer azurite) {
    Settings s =
        run.withTimings(
            Duration.ofSeconds(15),
            Duration.ofSeconds(10),
            Duration.ofSeconds(2),
            Duration.ofSeconds(3));
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put(
        "timings",
        "Azure's shortest lease and the elector's defaults, not the run's (Azure grants 15 s to 60 s only)");
    settings.put("call timeout", s.callTimeout().toMillis() + " ms");
    settings.put(
        "Azure SDK client",
        "JDK HTTP client, connect, response and read timeout = call timeout, no retries"
            + " (as the azure-blob provider builds it)");
    settings.put("container", AZURE_CONTAINER + " (created by the first store)");
    return new BatonContender(
        "Azure Blob",
        "Azurite (npm) blob service, in memory",
        Optional.of(azurite.address()),
        s,
        settings,
        "LeaseStore calls (no server-side count; a renewal is one HTTP request, a grant up to four)",
        s.leaseDuration(),
        (node, through) -> openAzureBlob(through.orElseThrow().address(), s),
        null);
  }

  /** The store the azure-blob provider opens from a connection string: what a user gets. */
  static BatonContender.OpenedStore openAzureBlob(InetSocketAddress through, Settings s) {
    Properties p = new Properties();
    p.setProperty(
        AzureBlobLeaseStoreProvider.CONNECTION_STRING,
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
            + AZURITE_KEY
            + ";BlobEndpoint=http://127.0.0.1:"
            + through.getPort()
            + "/devstoreaccount1;");
    p.setProperty(AzureBlobLeaseStoreProvider.CONTAINER, AZURE_CONTAINER);
    p.setProperty(AzureBlobLeaseStoreProvider.CREATE_CONTAINER, "true");
    p.setProperty(AzureBlobLeaseStoreProvider.CALL_TIMEOUT, s.callTimeout().toMillis() + "ms");
    p.setProperty(ElectionProperties.RENEW_DEADLINE, s.renewDeadline().toMillis() + "ms");
    LeaseStore store = new AzureBlobLeaseStoreProvider().open(ElectionProperties.of(p));
    return new BatonContender.OpenedStore(store, null, Optional.empty(), Optional.empty());
  }
}
