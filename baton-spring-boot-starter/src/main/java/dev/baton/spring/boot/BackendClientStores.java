package dev.baton.spring.boot;

import com.azure.storage.blob.BlobServiceClient;
import dev.baton.azureblob.AzureBlobLeaseStoreProvider;
import dev.baton.dynamodb.DynamoDbLeaseStoreProvider;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import dev.baton.etcd.EtcdLeaseStore;
import dev.baton.etcd.EtcdLeaseStoreProvider;
import dev.baton.jdbc.JdbcLeaseStore;
import dev.baton.jdbc.JdbcLeaseStoreProvider;
import dev.baton.kubernetes.KubernetesLeaseStore;
import dev.baton.kubernetes.KubernetesLeaseStoreProvider;
import dev.baton.zookeeper.ZooKeeperLeaseStore;
import dev.baton.zookeeper.ZooKeeperLeaseStoreProvider;
import io.etcd.jetcd.Client;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * One configuration per backend, each loaded only when that backend's jar (and its client library)
 * is on the classpath, so no class of an absent backend is ever touched. Each reads the backend's
 * own keys with the backend's defaults; the call timeout by the one rule ({@link
 * CallTimeout#read}), derived from the renew deadline or checked against it, as the backend's
 * provider does.
 */
final class BackendClientStores {

  private BackendClientStores() {}

  /**
   * True when the store for {@code backend} runs on the application's {@code client}: {@code
   * provider} is that backend, the application has one such client, and none of {@code serverKeys}
   * asks for a client of Baton's own. Then refuses the backend's keys other than {@code applied},
   * which would otherwise be ignored unseen: those of a client Baton builds itself (a pool size,
   * credentials, TLS files), and the few store keys that only the backend's provider reads (the
   * ZooKeeper ACL, etcd's lease sharing and transaction size). Names the keys, never their values.
   */
  static boolean onApplicationClient(
      String backend,
      ElectionProperties p,
      LeaseStoreProvider provider,
      List<String> serverKeys,
      Object client,
      String clientName,
      String... applied) {
    if (!backend.equals(provider.name())
        || serverKeys.stream().anyMatch(k -> p.get(k).isPresent())
        || client == null) {
      return false;
    }
    String serverKey = String.join(" or ", serverKeys);
    Set<String> used = Set.of(applied);
    List<String> unapplied =
        provider.keys().stream()
            .filter(k -> !used.contains(k) && p.get(k).isPresent())
            .sorted()
            .toList();
    if (!unapplied.isEmpty()) {
      boolean one = unapplied.size() == 1;
      throw new ConfigurationException(
          String.join(", ", unapplied)
              + (one ? " is" : " are")
              + " set, but "
              + serverKey
              + " is not: the store runs on "
              + clientName
              + ", and "
              + (one ? "that key applies" : "those keys apply")
              + " only where Baton builds the client itself; set "
              + serverKey
              + ", or remove "
              + (one ? "it" : "them"));
    }
    return true;
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"dev.baton.jdbc.JdbcLeaseStore", "javax.sql.DataSource"})
  static class Jdbc {
    @Bean
    @ConditionalOnMissingBean(name = "batonJdbcClientStore")
    ApplicationClientStore batonJdbcClientStore(ObjectProvider<DataSource> dataSources) {
      return (backend, p) -> {
        DataSource dataSource = dataSources.getIfUnique();
        if (!onApplicationClient(
            backend,
            p,
            new JdbcLeaseStoreProvider(),
            List.of(JdbcLeaseStoreProvider.URL),
            dataSource,
            "the application's DataSource",
            JdbcLeaseStoreProvider.TABLE,
            JdbcLeaseStoreProvider.SCHEMA,
            JdbcLeaseStoreProvider.CREATE_TABLE,
            JdbcLeaseStoreProvider.CALL_TIMEOUT)) {
          return Optional.empty();
        }
        JdbcLeaseStore.Builder b =
            JdbcLeaseStore.builder(dataSource)
                .callTimeout(CallTimeout.read(p, JdbcLeaseStoreProvider.CALL_TIMEOUT));
        p.get(JdbcLeaseStoreProvider.TABLE).ifPresent(b::table);
        p.get(JdbcLeaseStoreProvider.SCHEMA).ifPresent(b::schema);
        if (p.get(JdbcLeaseStoreProvider.CREATE_TABLE).isPresent()) {
          b.createTable(p.bool(JdbcLeaseStoreProvider.CREATE_TABLE, true));
        }
        return Optional.<LeaseStore>of(b.build());
      };
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "dev.baton.zookeeper.ZooKeeperLeaseStore",
        "org.apache.curator.framework.CuratorFramework"
      })
  static class Zookeeper {
    @Bean
    @ConditionalOnMissingBean(name = "batonZookeeperClientStore")
    ApplicationClientStore batonZookeeperClientStore(ObjectProvider<CuratorFramework> clients) {
      return (backend, p) -> {
        CuratorFramework client = clients.getIfUnique();
        if (!onApplicationClient(
            backend,
            p,
            new ZooKeeperLeaseStoreProvider(),
            List.of(ZooKeeperLeaseStoreProvider.CONNECT_STRING),
            client,
            "the application's CuratorFramework",
            ZooKeeperLeaseStoreProvider.BASE_PATH,
            ZooKeeperLeaseStoreProvider.CALL_TIMEOUT)) {
          return Optional.empty();
        }
        ZooKeeperLeaseStore.Builder b =
            ZooKeeperLeaseStore.builder(client)
                .callTimeout(CallTimeout.read(p, ZooKeeperLeaseStoreProvider.CALL_TIMEOUT));
        p.get(ZooKeeperLeaseStoreProvider.BASE_PATH).ifPresent(b::basePath);
        return Optional.<LeaseStore>of(b.build());
      };
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"dev.baton.etcd.EtcdLeaseStore", "io.etcd.jetcd.Client"})
  static class Etcd {
    @Bean
    @ConditionalOnMissingBean(name = "batonEtcdClientStore")
    ApplicationClientStore batonEtcdClientStore(ObjectProvider<Client> clients) {
      return (backend, p) -> {
        Client client = clients.getIfUnique();
        if (!onApplicationClient(
            backend,
            p,
            new EtcdLeaseStoreProvider(),
            List.of(EtcdLeaseStoreProvider.ENDPOINTS),
            client,
            "the application's jetcd Client",
            EtcdLeaseStoreProvider.PREFIX,
            EtcdLeaseStoreProvider.CALL_TIMEOUT)) {
          return Optional.empty();
        }
        EtcdLeaseStore.Builder b =
            EtcdLeaseStore.builder(client)
                .callTimeout(CallTimeout.read(p, EtcdLeaseStoreProvider.CALL_TIMEOUT));
        p.get(EtcdLeaseStoreProvider.PREFIX).ifPresent(b::prefix);
        return Optional.<LeaseStore>of(b.build());
      };
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "dev.baton.kubernetes.KubernetesLeaseStore",
        "io.fabric8.kubernetes.client.KubernetesClient"
      })
  static class Kubernetes {
    @Bean
    @ConditionalOnMissingBean(name = "batonKubernetesClientStore")
    ApplicationClientStore batonKubernetesClientStore(ObjectProvider<KubernetesClient> clients) {
      return (backend, p) -> {
        KubernetesClient client = clients.getIfUnique();
        if (!onApplicationClient(
            backend,
            p,
            new KubernetesLeaseStoreProvider(),
            List.of(KubernetesLeaseStoreProvider.KUBECONFIG),
            client,
            "the application's KubernetesClient",
            KubernetesLeaseStoreProvider.NAMESPACE,
            KubernetesLeaseStoreProvider.CALL_TIMEOUT)) {
          return Optional.empty();
        }
        KubernetesLeaseStore.Builder b =
            KubernetesLeaseStore.builder(client)
                .callTimeout(CallTimeout.read(p, KubernetesLeaseStoreProvider.CALL_TIMEOUT));
        p.get(KubernetesLeaseStoreProvider.NAMESPACE).ifPresent(b::namespace);
        return Optional.of(b.build());
      };
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "dev.baton.dynamodb.DynamoDbLeaseStore",
        "software.amazon.awssdk.services.dynamodb.DynamoDbClient"
      })
  static class DynamoDb {
    @Bean
    @ConditionalOnMissingBean(name = "batonDynamoDbClientStore")
    ApplicationClientStore batonDynamoDbClientStore(ObjectProvider<DynamoDbClient> clients) {
      return (backend, p) -> {
        DynamoDbClient client = clients.getIfUnique();
        if (!onApplicationClient(
            backend,
            p,
            new DynamoDbLeaseStoreProvider(),
            List.of(DynamoDbLeaseStoreProvider.REGION, DynamoDbLeaseStoreProvider.ENDPOINT),
            client,
            "the application's DynamoDbClient",
            DynamoDbLeaseStoreProvider.TABLE,
            DynamoDbLeaseStoreProvider.CREATE_TABLE,
            DynamoDbLeaseStoreProvider.ALLOW_GLOBAL_TABLE,
            DynamoDbLeaseStoreProvider.CALL_TIMEOUT)) {
          return Optional.empty();
        }
        return Optional.of(DynamoDbLeaseStoreProvider.openOn(client, p));
      };
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "dev.baton.azureblob.AzureBlobLeaseStore",
        "com.azure.storage.blob.BlobServiceClient"
      })
  static class AzureBlob {
    @Bean
    @ConditionalOnMissingBean(name = "batonAzureBlobClientStore")
    ApplicationClientStore batonAzureBlobClientStore(ObjectProvider<BlobServiceClient> clients) {
      return (backend, p) -> {
        BlobServiceClient client = clients.getIfUnique();
        if (!onApplicationClient(
            backend,
            p,
            new AzureBlobLeaseStoreProvider(),
            List.of(
                AzureBlobLeaseStoreProvider.CONNECTION_STRING,
                AzureBlobLeaseStoreProvider.ENDPOINT,
                AzureBlobLeaseStoreProvider.SAS_TOKEN),
            client,
            "the application's BlobServiceClient",
            AzureBlobLeaseStoreProvider.CONTAINER,
            AzureBlobLeaseStoreProvider.CREATE_CONTAINER,
            AzureBlobLeaseStoreProvider.CALL_TIMEOUT)) {
          return Optional.empty();
        }
        return Optional.of(AzureBlobLeaseStoreProvider.openOn(client, p));
      };
    }
  }
}
