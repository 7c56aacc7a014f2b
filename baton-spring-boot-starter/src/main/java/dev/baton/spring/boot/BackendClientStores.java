package dev.baton.spring.boot;

import dev.baton.election.LeaseStore;
import dev.baton.etcd.EtcdLeaseStore;
import dev.baton.jdbc.JdbcLeaseStore;
import dev.baton.kubernetes.KubernetesLeaseStore;
import dev.baton.zookeeper.ZooKeeperLeaseStore;
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
 * is on the classpath, so no class of an absent backend is ever touched.
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
        if (!backend.equals("jdbc") || p.jdbc().url() != null || dataSource == null) {
          return Optional.empty();
        }
        JdbcLeaseStore.Builder b =
            JdbcLeaseStore.builder(dataSource)
                .table(p.jdbc().table())
                .createTable(p.jdbc().createTable())
                .callTimeout(p.jdbc().callTimeout());
        if (p.jdbc().schema() != null) {
          b.schema(p.jdbc().schema());
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
        if (!backend.equals("zookeeper")
            || p.zookeeper().connectString() != null
            || client == null) {
          return Optional.empty();
        }
        ZooKeeperLeaseStore.Builder b = ZooKeeperLeaseStore.builder(client);
        if (p.zookeeper().basePath() != null) {
          b.basePath(p.zookeeper().basePath());
        }
        if (p.zookeeper().callTimeout() != null) {
          b.callTimeout(p.zookeeper().callTimeout());
        }
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
        if (!backend.equals("etcd") || p.etcd().endpoints() != null || client == null) {
          return Optional.empty();
        }
        EtcdLeaseStore.Builder b = EtcdLeaseStore.builder(client);
        if (p.etcd().prefix() != null) {
          b.prefix(p.etcd().prefix());
        }
        if (p.etcd().callTimeout() != null) {
          b.callTimeout(p.etcd().callTimeout());
        }
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
        if (!backend.equals("kubernetes")
            || p.kubernetes().kubeconfig() != null
            || client == null) {
          return Optional.empty();
        }
        KubernetesLeaseStore.Builder b = KubernetesLeaseStore.builder(client);
        if (p.kubernetes().namespace() != null) {
          b.namespace(p.kubernetes().namespace());
        }
        if (p.kubernetes().callTimeout() != null) {
          b.callTimeout(p.kubernetes().callTimeout());
        }
        return Optional.of(b.build());
      };
    }
  }
}
