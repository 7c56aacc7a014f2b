package dev.baton.spring.boot;

import dev.baton.election.CallTimeout;
import dev.baton.election.LeaseStore;
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
import java.util.Optional;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * One configuration per backend, each loaded only when that backend's jar (and its client library)
 * is on the classpath, so no class of an absent backend is ever touched. Each reads the backend's
 * own keys with the backend's defaults; the call timeout by the one rule ({@link
 * CallTimeout#read}), derived from the renew deadline or checked against it, as the backend's
 * provider does.
 */
final class BackendClientStores {

  private BackendClientStores() {}

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"dev.baton.jdbc.JdbcLeaseStore", "javax.sql.DataSource"})
  static class Jdbc {
    @Bean
    @ConditionalOnMissingBean(name = "batonJdbcClientStore")
    ApplicationClientStore batonJdbcClientStore(ObjectProvider<DataSource> dataSources) {
      return (backend, p) -> {
        DataSource dataSource = dataSources.getIfUnique();
        if (!backend.equals(JdbcLeaseStoreProvider.NAME)
            || p.get(JdbcLeaseStoreProvider.URL).isPresent()
            || dataSource == null) {
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
        if (!backend.equals(ZooKeeperLeaseStoreProvider.NAME)
            || p.get(ZooKeeperLeaseStoreProvider.CONNECT_STRING).isPresent()
            || client == null) {
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
        if (!backend.equals(EtcdLeaseStoreProvider.NAME)
            || p.get(EtcdLeaseStoreProvider.ENDPOINTS).isPresent()
            || client == null) {
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
        if (!backend.equals(KubernetesLeaseStoreProvider.NAME)
            || p.get(KubernetesLeaseStoreProvider.KUBECONFIG).isPresent()
            || client == null) {
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
}
