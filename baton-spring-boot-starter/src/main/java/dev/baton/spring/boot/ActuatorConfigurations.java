package dev.baton.spring.boot;

import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Actuator contributions, each only when the application has Actuator on its classpath. */
final class ActuatorConfigurations {

  private ActuatorConfigurations() {}

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  @ConditionalOnEnabledHealthIndicator("election")
  static class Health {
    @Bean
    @ConditionalOnMissingBean(name = "electionHealthIndicator")
    ElectionHealthIndicator electionHealthIndicator(Elector elector, ElectionStatus status) {
      return new ElectionHealthIndicator(elector, status);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.info.InfoContributor")
  static class Info {
    @Bean
    @ConditionalOnMissingBean(name = "electionInfoContributor")
    InfoContributor electionInfoContributor(
        Elector elector, LeaseStore store, ElectionStatus status) {
      return builder -> builder.withDetail("election", status.describe(elector, store));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
  static class StepDownEndpoint {
    @Bean
    @ConditionalOnMissingBean
    ElectionEndpoint electionEndpoint(Elector elector, LeaseStore store, ElectionStatus status) {
      return new ElectionEndpoint(elector, store, status);
    }
  }
}
