package dev.baton.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.ConfigurationException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Bad configuration fails the context at start, with Baton's own message naming the key. */
class BadConfigurationTest {

  /**
   * Only Baton's auto-configuration: these contexts fail or stop before anything else would matter.
   */
  @SpringBootConfiguration
  @ImportAutoConfiguration(BatonAutoConfiguration.class)
  static class App {}

  static Throwable start(String... properties) {
    return start(App.class, properties);
  }

  /** Starts {@code application} and returns why it failed; fails the test when it started. */
  static Throwable start(Class<?> application, String... properties) {
    try {
      new SpringApplicationBuilder(application)
          .web(WebApplicationType.NONE)
          .properties(properties)
          .run()
          .close();
    } catch (Throwable e) {
      return e;
    }
    throw new AssertionError("the context started");
  }

  static ConfigurationException cause(Throwable e) {
    Throwable t = e;
    while (t != null && !(t instanceof ConfigurationException)) {
      t = t.getCause();
    }
    assertThat(t).as("a ConfigurationException in the causes of %s", e).isNotNull();
    return (ConfigurationException) t;
  }

  @Test
  @DisplayName("a renew deadline longer than the lease names both keys")
  void inconsistentTiming() {
    ConfigurationException e =
        cause(start("election.backend=memory", "election.name=x", "election.renew-deadline=20s"));
    assertThat(e)
        .hasMessageContaining("election.renew-deadline")
        .hasMessageContaining("20s")
        .hasMessageContaining("leaseDuration (15s, the default)");
    FailureAnalysis analysis = new ElectionConfigurationFailureAnalyzer().analyze(e);
    assertThat(analysis.getDescription())
        .startsWith("Baton's election configuration is invalid: ")
        .contains("election.renew-deadline");
  }

  @Test
  @DisplayName(
      "several backends on the classpath and none chosen lists them under election.backend")
  void backendNotChosen() {
    ConfigurationException e = cause(start("election.name=x"));
    assertThat(e)
        .hasMessageContaining("election.backend")
        .hasMessageContaining("jdbc")
        .hasMessageContaining("zookeeper");
  }

  @Test
  @DisplayName("an unknown backend is named with the ones found")
  void unknownBackend() {
    ConfigurationException e = cause(start("election.backend=nomad", "election.name=x"));
    assertThat(e)
        .hasMessageContaining("election.backend")
        .hasMessageContaining("'nomad'")
        .hasMessageContaining("jdbc");
  }

  @Test
  @DisplayName("no election name and no application name says which key to set")
  void noName() {
    ConfigurationException e = cause(start("election.backend=memory"));
    assertThat(e)
        .hasMessageContaining("election.name")
        .hasMessageContaining("spring.application.name");
  }

  @Test
  @DisplayName("election.enabled=false configures nothing")
  void disabled() {
    var c =
        new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties("election.enabled=false", "election.renew-deadline=20s")
            .run();
    try {
      assertThat(c.getBeanNamesForType(dev.baton.election.Elector.class)).isEmpty();
    } finally {
      c.close();
    }
  }

  @Test
  @DisplayName("the Spring application name is the default election name")
  void applicationName() {
    var c =
        new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties("election.backend=memory", "spring.application.name=billing")
            .run();
    try {
      assertThat(c.getBean(dev.baton.election.Elector.class).election()).isEqualTo("billing");
    } finally {
      c.close();
    }
  }

  @Test
  @DisplayName("a duration that does not parse fails binding with the key")
  void badDuration() {
    Throwable e =
        start("election.backend=memory", "election.name=x", "election.lease-duration=soon");
    assertThat(e).hasStackTraceContaining("election.lease-duration");
  }
}
