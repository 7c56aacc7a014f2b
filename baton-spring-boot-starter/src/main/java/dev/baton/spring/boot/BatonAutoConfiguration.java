package dev.baton.spring.boot;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionListener;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.ElectorBuilder;
import dev.baton.election.ElectorObserver;
import dev.baton.election.LeaseStore;
import dev.baton.election.TermWork;
import dev.baton.micrometer.ElectorMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/**
 * A {@link LeaseStore} from the backend jar on the classpath (on the application's own client when
 * it has one), one {@link Elector} for {@code election.name} that runs the application's {@link
 * TermWork} beans and {@link WhileLeader} methods while it leads, started and closed with the
 * context, with Micrometer meters when there is a registry. Every bean gives way to one the
 * application declares.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnBooleanProperty(name = "election.enabled", matchIfMissing = true)
@EnableConfigurationProperties(BatonProperties.class)
@Import({
  BackendClientStores.Jdbc.class,
  BackendClientStores.Zookeeper.class,
  BackendClientStores.Etcd.class,
  BackendClientStores.Kubernetes.class,
  BackendClientStores.DynamoDb.class,
  BackendClientStores.AzureBlob.class,
  ActuatorConfigurations.Health.class,
  ActuatorConfigurations.Info.class,
  ActuatorConfigurations.StepDownEndpoint.class
})
public class BatonAutoConfiguration {

  /**
   * The election.* keys as Spring resolves them, read by Baton's own rules: the store and the
   * elector are configured from this one object, as outside Spring.
   */
  @Bean
  @ConditionalOnMissingBean
  ElectionProperties batonElectionProperties(ConfigurableEnvironment environment) {
    return EnvironmentElectionProperties.read(environment);
  }

  @Bean
  @ConditionalOnMissingBean
  LeaseStore batonLeaseStore(
      ElectionProperties election, ObjectProvider<ApplicationClientStore> clientStores) {
    String backend = election.backendName();
    for (ApplicationClientStore s : clientStores.orderedStream().toList()) {
      Optional<LeaseStore> store = s.open(backend, election);
      if (store.isPresent()) {
        return store.get();
      }
    }
    return election.openStore();
  }

  @Bean
  @ConditionalOnMissingBean
  ElectionStatus batonElectionStatus() {
    return new ElectionStatus();
  }

  /**
   * The bean name of the auto-configured elector, which runs the {@link WhileLeader} methods that
   * name none.
   */
  static final String ELECTOR = "batonElector";

  /** Static: a post-processor, created before the configuration class and the beans it looks at. */
  @Bean
  @ConditionalOnMissingBean
  static WhileLeaderMethods batonWhileLeaderMethods() {
    return new WhileLeaderMethods();
  }

  @Bean(ELECTOR)
  @ConditionalOnMissingBean
  Elector batonElector(
      LeaseStore store,
      ElectionProperties configured,
      BatonProperties properties,
      Environment environment,
      ElectionStatus status,
      ObjectProvider<TermWork> work,
      ObjectProvider<ElectionListener> listeners,
      WhileLeaderMethods methods,
      ObjectProvider<ElectorObserver> observers,
      ObjectProvider<MeterRegistry> registries) {
    ElectionProperties election = configured;
    if (election.get(ElectionProperties.NAME).isEmpty()) {
      String application = environment.getProperty("spring.application.name");
      if (application == null || application.isBlank()) {
        throw new ConfigurationException(
            ElectionProperties.NAME
                + " is required but not set, and there is no spring.application.name to use instead");
      }
      election = election.with(ElectionProperties.NAME, application);
    }
    LeaderBeans beans = new LeaderBeans(work, listeners, methods.forElector(ELECTOR));
    // No JVM shutdown hook of Baton's own: the context's lifecycle closes the elector, in order,
    // before the DataSource or client it uses is closed.
    ElectorBuilder builder =
        Elector.builder(store)
            .configure(election)
            .closeOnShutdown(false)
            .whileLeader(beans)
            .listener(beans)
            .observer(status.observer());
    observers.orderedStream().forEach(builder::observer);
    MeterRegistry registry = registries.getIfUnique();
    ElectorMetrics metrics = null;
    if (registry != null) {
      metrics =
          ElectorMetrics.builder(registry)
              .backend(election.backendName())
              .clientGoStatus(properties.metrics().clientGoStatus())
              .build();
      builder.observer(metrics);
    }
    Elector elector = builder.build();
    if (metrics != null) {
      metrics.bindTo(elector);
    }
    return elector;
  }

  @Bean
  @ConditionalOnMissingBean
  static ElectorLifecycle batonElectorLifecycle(ObjectProvider<Elector> electors) {
    return new ElectorLifecycle(electors);
  }
}
