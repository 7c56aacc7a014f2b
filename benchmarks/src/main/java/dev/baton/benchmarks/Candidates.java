package dev.baton.benchmarks;

import dev.baton.benchmarks.Main.Setup;
import dev.baton.testservers.ConsulServers;
import dev.baton.testservers.H2TcpServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Every contender of a run, in report order: each backend, followed by the peer library that runs
 * on the same server. A contender whose server is missing is skipped with the reason.
 */
final class Candidates {

  /**
   * @param server the server it runs on: contenders on the same server are measured side by side,
   *     their first-leader rounds taken in turns
   */
  record Entry(
      String name, String server, Supplier<Optional<String>> missing, Setup<Contender> create) {}

  private Candidates() {}

  static List<Entry> all(Settings s, Servers servers, Versions.Catalog versions) {
    Supplier<Optional<String>> always = Optional::empty;
    Supplier<Optional<String>> postgres =
        () ->
            Servers.reachable(Servers.POSTGRES)
                ? Optional.empty()
                : Optional.of(
                    "PostgreSQL is not reachable at 127.0.0.1:5432 (user postgres, database test)");
    Supplier<Optional<String>> mariadb =
        () ->
            Servers.reachable(Servers.MARIADB)
                ? Optional.empty()
                : Optional.of(
                    "MariaDB is not reachable at 127.0.0.1:3306 (user root, empty password, database test)");
    Supplier<Optional<String>> etcd =
        () ->
            EtcdServer.binary().isPresent()
                ? Optional.empty()
                : Optional.of("the etcd binary is not installed (scripts/install-etcd)");
    List<Entry> entries = new ArrayList<>();
    entries.add(new Entry("memory", "memory", always, () -> Backends.memory(s)));
    entries.add(
        new Entry(
            "H2",
            "H2",
            always,
            () -> {
              H2TcpServer h2 = servers.h2();
              versions.put("H2", H2TcpServer.version());
              return Backends.h2(s, h2);
            }));
    entries.add(
        new Entry(
            "PostgreSQL",
            "PostgreSQL",
            postgres,
            () -> {
              String v = postgresVersion(versions);
              Servers.emptyTable(
                  Servers.postgresUrl(Servers.POSTGRES.getPort()),
                  Servers.POSTGRES_USER,
                  Backends.JDBC_TABLE);
              return Backends.postgres(s, v);
            }));
    entries.add(
        new Entry(
            "Spring Integration",
            "PostgreSQL",
            postgres,
            () -> {
              SpringLeaderContender c = new SpringLeaderContender(s, postgresVersion(versions));
              versions.put(c.name() + " (peer)", c.library());
              return c;
            }));
    entries.add(
        new Entry(
            "MariaDB",
            "MariaDB",
            mariadb,
            () -> {
              String v =
                  Servers.databaseVersion(
                          Servers.mariadbUrl(Servers.MARIADB.getPort()), Servers.MARIADB_USER)
                      .orElse("MariaDB");
              versions.put("MariaDB", v);
              Servers.emptyTable(
                  Servers.mariadbUrl(Servers.MARIADB.getPort()),
                  Servers.MARIADB_USER,
                  Backends.JDBC_TABLE);
              return Backends.mariadb(s, v);
            }));
    entries.add(
        new Entry(
            "ZooKeeper",
            "ZooKeeper",
            always,
            () -> {
              ZooKeeperServerInJvm zk = servers.zookeeper();
              versions.put(
                  "ZooKeeper",
                  zk.version()
                      + " (in this JVM, tickTime "
                      + ZooKeeperServerInJvm.TICK_MILLIS
                      + " ms)");
              return Backends.zookeeper(s, zk);
            }));
    entries.add(
        new Entry(
            "Curator LeaderLatch",
            "ZooKeeper",
            always,
            () -> {
              CuratorLatchContender c = new CuratorLatchContender(servers.zookeeper(), s);
              versions.put(c.name() + " (peer)", c.library());
              return c;
            }));
    entries.add(
        new Entry(
            "etcd",
            "etcd",
            etcd,
            () -> {
              EtcdServer server = servers.etcd();
              String v = server.version();
              versions.put("etcd", v + " (one member)");
              return Backends.etcd(s, server, v);
            }));
    entries.add(
        new Entry(
            "jetcd Election",
            "etcd",
            etcd,
            () -> {
              EtcdServer server = servers.etcd();
              JetcdElectionContender c = new JetcdElectionContender(server, server.version(), s);
              versions.put(c.name() + " (peer)", c.library());
              return c;
            }));
    entries.add(
        new Entry(
            "Kubernetes",
            "Kubernetes",
            always,
            () -> {
              KubernetesMock mock = servers.kubernetes();
              versions.put(
                  "Kubernetes API",
                  "fabric8 kubernetes-server-mock "
                      + Versions.of(
                          io.fabric8.kubernetes.client.server.mock.KubernetesMockServer.class,
                          "io.fabric8",
                          "kubernetes-server-mock")
                      + " (CRUD mode)");
              return Backends.kubernetes(s, mock);
            }));
    entries.add(
        new Entry(
            "fabric8 LeaderElector",
            "Kubernetes",
            always,
            () -> {
              Fabric8ElectorContender c = new Fabric8ElectorContender(servers.kubernetes(), s);
              versions.put(c.name() + " (peer)", c.library());
              return c;
            }));
    Supplier<Optional<String>> dynalite =
        () -> Servers.npmServerMissing("dynalite", "dynalite/cli.js");
    entries.add(
        new Entry(
            "DynamoDB",
            "DynamoDB",
            dynalite,
            () -> {
              versions.put("dynalite", "4.0.0 (npm, tools/dynalite/package-lock.json)");
              return Backends.dynamodb(s, servers.dynalite());
            }));
    Supplier<Optional<String>> consul =
        () ->
            ConsulServers.binary().isPresent()
                ? Optional.empty()
                : Optional.of("the consul binary is not installed (scripts/install-consul)");
    entries.add(
        new Entry(
            "Consul",
            "Consul",
            consul,
            () -> {
              versions.put(
                  "Consul", "1.8.7 (Debian 11's package, tools/consul/bin/consul), dev agent");
              return Backends.consul(s, servers.consul());
            }));
    Supplier<Optional<String>> azurite =
        () -> Servers.npmServerMissing("azurite", "azurite/dist/src/blob/main.js");
    entries.add(
        new Entry(
            "Azure Blob",
            "Azure Blob",
            azurite,
            () -> {
              versions.put("Azurite", "3.37.0 (npm, tools/azurite/package-lock.json)");
              return Backends.azureBlob(s, servers.azurite());
            }));
    return entries;
  }

  private static String postgresVersion(Versions.Catalog versions) {
    String v =
        Servers.databaseVersion(
                Servers.postgresUrl(Servers.POSTGRES.getPort()), Servers.POSTGRES_USER)
            .orElse("PostgreSQL");
    versions.put("PostgreSQL", v);
    return v;
  }
}
