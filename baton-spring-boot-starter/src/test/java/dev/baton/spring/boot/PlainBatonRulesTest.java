package dev.baton.spring.boot;

import static dev.baton.spring.boot.BadConfigurationTest.cause;
import static dev.baton.spring.boot.BadConfigurationTest.start;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import dev.baton.election.MemoryLeaseStore;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The starter reads the election.* keys with plain Baton's rules: the same keys, defaults, checks
 * and messages. Each message is compared with the one plain Baton gives for the same settings.
 */
class PlainBatonRulesTest {

  /**
   * The application has a DataSource: the JDBC store runs on it unless election.jdbc.url is set.
   */
  @SpringBootConfiguration
  @ImportAutoConfiguration(BatonAutoConfiguration.class)
  static class AppWithDataSource {
    @Bean
    DataSource dataSource() {
      JdbcDataSource h2 = new JdbcDataSource();
      h2.setURL("jdbc:h2:mem:spring-rules-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
      return h2;
    }
  }

  /** What plain Baton says of {@code settings}: opening the store, then configuring an elector. */
  static String plainBatonMessage(String... settings) {
    Properties p = new Properties();
    for (String s : settings) {
      p.setProperty(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
    }
    ConfigurationException e =
        catchThrowableOfType(
            ConfigurationException.class,
            () -> {
              ElectionProperties properties = ElectionProperties.of(p);
              try (LeaseStore store = properties.openStore()) {
                Elector.builder(store).configure(properties).build().close();
              }
            });
    assertThat(e).as("plain Baton refuses %s", String.join(", ", settings)).isNotNull();
    return e.getMessage();
  }

  /** Starts the application with {@code settings}, which must start it. */
  static ConfigurableApplicationContext run(String... settings) {
    return new SpringApplicationBuilder(BadConfigurationTest.App.class)
        .web(WebApplicationType.NONE)
        .properties(settings)
        .run();
  }

  /** Starts the application with {@code settings}: it must fail with plain Baton's message. */
  static ConfigurationException refusedAsPlainBatonRefuses(String... settings) {
    ConfigurationException e = cause(start(settings));
    assertThat(e).hasMessage(plainBatonMessage(settings));
    return e;
  }

  @Test
  @DisplayName(
      "a typo in a key is refused, naming the key and the nearest one, as plain Baton does")
  void typo() {
    String[] settings = {
      "election.backend=memory", "election.name=typo", "election.renew-dealine=5s"
    };
    ConfigurationException e = refusedAsPlainBatonRefuses(settings);
    assertThat(e)
        .hasMessageContaining("election.renew-dealine")
        .hasMessageContaining("did you mean election.renew-deadline?");
  }

  @Test
  @DisplayName("a near miss of the election. prefix is refused as plain Baton refuses it")
  void misspeltPrefix() {
    String[] settings = {"election.backend=memory", "election.name=prefix", "electon.name=other"};
    ConfigurationException e = refusedAsPlainBatonRefuses(settings);
    assertThat(e).hasMessageContaining("did you mean election.name?");
  }

  @Test
  @DisplayName("other libraries' keys that only look like election. keys are left alone")
  void otherLibrariesKeys() {
    ConfigurableApplicationContext c =
        run(
            "election.backend=memory",
            "election.name=others",
            "selection.mode=fast",
            "elections.count=3");
    try {
      assertThat(c.getBean(Elector.class).election()).isEqualTo("others");
    } finally {
      c.close();
    }
  }

  @Test
  @DisplayName(
      "a key for a pool of Baton's own is refused when the store runs on the application's DataSource")
  void poolKeyWithoutUrl() {
    ConfigurationException e =
        cause(
            start(
                AppWithDataSource.class,
                "election.backend=jdbc",
                "election.name=pool-ds",
                "election.jdbc.pool-size=8",
                "election.jdbc.password=planted-secret"));
    assertThat(e)
        .hasMessageStartingWith(
            "election.jdbc.password, election.jdbc.pool-size are set, but election.jdbc.url is not:"
                + " the store runs on the application's DataSource")
        .hasMessageNotContaining("planted-secret");
  }

  @Test
  @DisplayName("a typo in a backend's key is refused on the application's DataSource too")
  void typoOnTheApplicationsDataSource() {
    ConfigurationException e =
        cause(
            start(
                AppWithDataSource.class,
                "election.backend=jdbc",
                "election.name=typo-ds",
                "election.jdbc.tabel=leases"));
    assertThat(e)
        .hasMessageContaining("election.jdbc.tabel")
        .hasMessageContaining("did you mean election.jdbc.table?");
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({"election.lease-duration, 15", "election.jdbc.call-timeout, 3"})
  @DisplayName("a duration without a unit is refused with plain Baton's message, not read as ms")
  void durationWithoutUnit(String key, String value) {
    String[] settings = {
      "election.backend=jdbc",
      "election.name=unitless",
      "election.jdbc.url=jdbc:h2:mem:unitless-" + System.nanoTime(),
      key + "=" + value
    };
    assertThat(refusedAsPlainBatonRefuses(settings).getMessage())
        .startsWith(key + ": cannot read '" + value + "' as a duration");
  }

  @Test
  @DisplayName("a call timeout without a unit is refused on the application's DataSource too")
  void callTimeoutWithoutUnitOnTheApplicationsDataSource() {
    ConfigurationException e =
        cause(
            start(
                AppWithDataSource.class,
                "election.backend=jdbc",
                "election.name=unitless-ds",
                "election.jdbc.call-timeout=3"));
    assertThat(e.getMessage())
        .startsWith("election.jdbc.call-timeout: cannot read '3' as a duration");
  }

  @Test
  @DisplayName("renew-deadline=4s with no call timeout set starts: the call timeout is derived")
  void callTimeoutDerivedFromTheRenewDeadline() {
    ConfigurableApplicationContext c =
        run(
            "election.backend=jdbc",
            "election.name=derived-" + System.nanoTime(),
            "election.jdbc.url=jdbc:h2:mem:derived-" + System.nanoTime(),
            "election.renew-deadline=4s");
    try {
      Elector elector = c.getBean(Elector.class);
      await().atMost(30, SECONDS).until(elector::isLeader);
    } finally {
      c.close();
    }
  }

  @Test
  @DisplayName(
      "on the application's DataSource a call timeout longer than half the renew deadline is refused")
  void callTimeoutCheckedOnTheApplicationsDataSource() {
    ConfigurationException e =
        cause(
            start(
                AppWithDataSource.class,
                "election.backend=jdbc",
                "election.name=checked-ds",
                "election.lease-duration=4s",
                "election.renew-deadline=2s",
                "election.retry-period=500ms",
                "election.jdbc.call-timeout=3s"));
    assertThat(e)
        .hasMessage(
            catchThrowableOfType(
                    ConfigurationException.class,
                    () ->
                        CallTimeout.check(
                            "election.jdbc.call-timeout",
                            Duration.ofSeconds(3),
                            Duration.ofSeconds(2)))
                .getMessage());
  }

  @Test
  @DisplayName("timing messages say which values were defaults, as plain Baton's do")
  void timingDefaultsNamed() {
    String[] settings = {
      "election.backend=memory", "election.name=timing", "election.renew-deadline=20s"
    };
    assertThat(refusedAsPlainBatonRefuses(settings))
        .hasMessageContaining("leaseDuration (15s, the default)");
  }

  @Test
  @DisplayName("Spring's relaxed forms of a key are read as the key")
  void relaxedForms() {
    ConfigurationException e =
        cause(
            start(
                "election.backend=memory", "election.name=relaxed", "election.renewDeadline=20s"));
    assertThat(e).hasMessageContaining("election.renew-deadline").hasMessageContaining("20s");
  }

  @Test
  @DisplayName("an unknown ELECTION_ variable is only warned about, as plain Baton does")
  void unknownEnvironmentVariable() {
    ConfigurableApplicationContext c =
        new SpringApplicationBuilder(BadConfigurationTest.App.class)
            .web(WebApplicationType.NONE)
            .initializers(
                BackendKeysTest.environment(
                    Map.of("ELECTION_RENEW_DEALINE", "5s", "ELECTION_NAME", "from-env")))
            .properties("election.backend=memory")
            .run();
    try {
      assertThat(c.getBean(Elector.class).election()).isEqualTo("from-env");
      assertThat(c.getBean(LeaseStore.class)).isInstanceOf(MemoryLeaseStore.class);
    } finally {
      c.close();
    }
  }
}
