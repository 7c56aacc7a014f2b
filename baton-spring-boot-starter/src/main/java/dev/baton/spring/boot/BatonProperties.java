package dev.baton.spring.boot;

import dev.baton.election.ElectionProperties;
import java.time.Duration;
import java.util.Properties;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The election.* keys, the same ones Baton reads outside Spring, so one file serves both and
 * ELECTION_JDBC_URL overrides election.jdbc.url through Spring's relaxed binding. Only
 * election.enabled and election.metrics.* are Spring's own. Values are checked by Baton when the
 * context starts, with its own messages naming the key.
 *
 * @param enabled whether to configure a store and an elector at all
 * @param backend the backend to use; optional when one backend jar is on the classpath
 * @param name the election; default spring.application.name
 * @param candidateId this candidate's id; default host name, process id and a random suffix
 * @param leaseDuration how long a lease lasts without renewal: the longest failover after a crash
 * @param renewDeadline how long a leader goes on without a confirmed renewal before it steps down
 * @param retryPeriod how often a leader renews and a polling follower tries
 * @param jdbc the JDBC backend; without url it uses the application's DataSource
 * @param zookeeper the ZooKeeper backend; without connect-string it uses the application's
 *     CuratorFramework
 * @param etcd the etcd backend; without endpoints it uses the application's jetcd Client
 * @param kubernetes the Kubernetes backend; uses the application's KubernetesClient when there is
 *     one
 * @param metrics what the Micrometer meters look like
 */
@ConfigurationProperties("election")
public record BatonProperties(
    @DefaultValue("true") boolean enabled,
    String backend,
    String name,
    String candidateId,
    @DefaultValue("15s") Duration leaseDuration,
    @DefaultValue("10s") Duration renewDeadline,
    @DefaultValue("2s") Duration retryPeriod,
    @DefaultValue Jdbc jdbc,
    @DefaultValue Zookeeper zookeeper,
    @DefaultValue Etcd etcd,
    @DefaultValue Kubernetes kubernetes,
    @DefaultValue Metrics metrics) {

  /**
   * @param url JDBC URL; when unset, the application's DataSource is used
   * @param username database user (with url)
   * @param password its password (with url); never printed
   * @param table lease table
   * @param schema schema of the table; default the connection's
   * @param createTable create the table on first use if it is missing
   * @param callTimeout longest one call may take; at most half the renew deadline
   * @param poolSize connections in the store's own pool (with url)
   */
  public record Jdbc(
      String url,
      String username,
      String password,
      @DefaultValue("baton_lease") String table,
      String schema,
      @DefaultValue("true") boolean createTable,
      @DefaultValue("3s") Duration callTimeout,
      Integer poolSize) {}

  /**
   * @param connectString ZooKeeper servers; when unset, the application's CuratorFramework is used
   * @param basePath parent node of the election nodes
   * @param sessionTimeout session timeout asked of the server (with connect-string)
   * @param connectionTimeout connection timeout (with connect-string)
   * @param callTimeout longest one call may take
   * @param digest digest credentials user:password; never printed
   * @param acl ACL of the nodes the store creates
   */
  public record Zookeeper(
      String connectString,
      String basePath,
      Duration sessionTimeout,
      Duration connectionTimeout,
      Duration callTimeout,
      String digest,
      String acl) {}

  /**
   * @param endpoints etcd endpoints; when unset, the application's jetcd Client is used
   * @param prefix key prefix of the elections
   * @param username etcd user (with endpoints)
   * @param password its password; never printed
   * @param caFile CA certificate file (with endpoints)
   * @param certFile client certificate file
   * @param keyFile client key file
   * @param callTimeout longest one call may take
   * @param leaseSharing how electors of this process share etcd leases (see the etcd backend)
   * @param maxTxnOps the cluster's --max-txn-ops, when above etcd's default of 128: batched
   *     renewals confirm that many keys per transaction
   */
  public record Etcd(
      String endpoints,
      String prefix,
      String username,
      String password,
      String caFile,
      String certFile,
      String keyFile,
      Duration callTimeout,
      String leaseSharing,
      Integer maxTxnOps) {}

  /**
   * @param namespace namespace of the Lease objects
   * @param kubeconfig kubeconfig file (when the application has no KubernetesClient)
   * @param callTimeout longest one call may take
   */
  public record Kubernetes(String namespace, String kubeconfig, Duration callTimeout) {}

  /**
   * @param clientGoStatus also export the leader gauge as client-go's leader_election_master_status
   */
  public record Metrics(@DefaultValue("false") boolean clientGoStatus) {}

  /** The same settings as Baton reads them outside Spring, for ElectionProperties.openStore(). */
  ElectionProperties toElectionProperties() {
    Properties p = new Properties();
    put(p, ElectionProperties.BACKEND, backend);
    put(p, ElectionProperties.NAME, name);
    put(p, ElectionProperties.CANDIDATE_ID, candidateId);
    put(p, ElectionProperties.LEASE_DURATION, leaseDuration);
    put(p, ElectionProperties.RENEW_DEADLINE, renewDeadline);
    put(p, ElectionProperties.RETRY_PERIOD, retryPeriod);
    put(p, "election.jdbc.url", jdbc.url());
    put(p, "election.jdbc.username", jdbc.username());
    put(p, "election.jdbc.password", jdbc.password());
    put(p, "election.jdbc.table", jdbc.table());
    put(p, "election.jdbc.schema", jdbc.schema());
    put(p, "election.jdbc.create-table", jdbc.createTable());
    put(p, "election.jdbc.call-timeout", jdbc.callTimeout());
    put(p, "election.jdbc.pool-size", jdbc.poolSize());
    put(p, "election.zookeeper.connect-string", zookeeper.connectString());
    put(p, "election.zookeeper.base-path", zookeeper.basePath());
    put(p, "election.zookeeper.session-timeout", zookeeper.sessionTimeout());
    put(p, "election.zookeeper.connection-timeout", zookeeper.connectionTimeout());
    put(p, "election.zookeeper.call-timeout", zookeeper.callTimeout());
    put(p, "election.zookeeper.digest", zookeeper.digest());
    put(p, "election.zookeeper.acl", zookeeper.acl());
    put(p, "election.etcd.endpoints", etcd.endpoints());
    put(p, "election.etcd.prefix", etcd.prefix());
    put(p, "election.etcd.username", etcd.username());
    put(p, "election.etcd.password", etcd.password());
    put(p, "election.etcd.ca-file", etcd.caFile());
    put(p, "election.etcd.cert-file", etcd.certFile());
    put(p, "election.etcd.key-file", etcd.keyFile());
    put(p, "election.etcd.call-timeout", etcd.callTimeout());
    put(p, "election.etcd.lease-sharing", etcd.leaseSharing());
    put(p, "election.etcd.max-txn-ops", etcd.maxTxnOps());
    put(p, "election.kubernetes.namespace", kubernetes.namespace());
    put(p, "election.kubernetes.kubeconfig", kubernetes.kubeconfig());
    put(p, "election.kubernetes.call-timeout", kubernetes.callTimeout());
    return ElectionProperties.of(p);
  }

  private static void put(Properties p, String key, Object value) {
    if (value instanceof Duration d) {
      // Baton's own syntax; nanosecond precision is more than any of its settings needs.
      p.setProperty(key, d.toMillis() + "ms");
    } else if (value != null) {
      p.setProperty(key, value.toString());
    }
  }
}
