package dev.baton.spring.boot;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.ServerPorts;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Every backend's keys reach its store from an application's properties, and from {@code
 * ELECTION_*} environment variables, as they do outside Spring. The servers need not run: the
 * store's description shows what it was configured with (the file store and JDBC on H2 lead too).
 */
class BackendKeysTest {

  @TempDir static Path directory;

  /** Replaces the process's environment with {@code variables}, as the system would set them. */
  static ApplicationContextInitializer<ConfigurableApplicationContext> environment(
      Map<String, String> variables) {
    return c ->
        c.getEnvironment()
            .getPropertySources()
            .replace(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource(
                    StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                    new LinkedHashMap<>(variables)));
  }

  /** One backend's keys and what its store must show of them. */
  record Backend(
      String name, Map<String, String> keys, Consumer<ConfigurableApplicationContext> check) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Backend> backends() {
    // Nothing listens there: the stores open without connecting, and the elector's calls fail.
    int closed = ServerPorts.belowEphemeralRange();
    String h2 = "jdbc:h2:mem:spring-keys-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
    return Stream.of(
        new Backend(
            "file",
            Map.of("election.file.directory", directory.resolve("leases").toString()),
            c -> {
              assertThat(describe(c)).isEqualTo("file (" + directory.resolve("leases") + ")");
              await().atMost(30, SECONDS).until(c.getBean(Elector.class)::isLeader);
            }),
        new Backend(
            "dynamodb",
            Map.of(
                "election.dynamodb.table", "spring-keys",
                "election.dynamodb.region", "eu-west-1",
                "election.dynamodb.endpoint", "http://127.0.0.1:" + closed,
                "election.dynamodb.call-timeout", "1s"),
            c ->
                assertThat(describe(c))
                    .contains("table spring-keys")
                    .contains("127.0.0.1:" + closed)),
        new Backend(
            "azure-blob",
            Map.of(
                "election.azure-blob.endpoint", "http://127.0.0.1:" + closed + "/devstoreaccount1",
                "election.azure-blob.sas-token", "sv=2024-01-01&sig=planted",
                "election.azure-blob.container", "spring-keys",
                "election.azure-blob.call-timeout", "1s"),
            c ->
                assertThat(describe(c))
                    .contains("container spring-keys")
                    .contains("127.0.0.1:" + closed + "/devstoreaccount1")
                    .doesNotContain("planted")),
        new Backend(
            "etcd",
            Map.of(
                "election.etcd.endpoints", "http://127.0.0.1:" + closed,
                "election.etcd.prefix", "/spring-keys/",
                "election.etcd.call-timeout", "1s"),
            c -> assertThat(describe(c)).contains("127.0.0.1:" + closed).contains("/spring-keys/")),
        new Backend(
            "jdbc",
            Map.of("election.jdbc.url", h2, "election.jdbc.table", "spring_keys"),
            c -> {
              await().atMost(30, SECONDS).until(c.getBean(Elector.class)::isLeader);
              assertThat(tables(h2)).contains("SPRING_KEYS");
            }));
  }

  static Stream<Arguments> settings() {
    List<Arguments> all = new ArrayList<>();
    backends()
        .forEach(
            b -> {
              all.add(Arguments.of(b, false));
              all.add(Arguments.of(b, true));
            });
    return all.stream();
  }

  @ParameterizedTest(name = "{0}, as environment variables: {1}")
  @MethodSource("settings")
  @DisplayName("a backend's keys reach its store")
  void keysReachTheStore(Backend backend, boolean asEnvironment) {
    Map<String, String> keys = new LinkedHashMap<>(backend.keys());
    keys.put(ElectionProperties.BACKEND, backend.name());
    keys.put(ElectionProperties.NAME, "keys-" + System.nanoTime());
    keys.put(ElectionProperties.RENEW_DEADLINE, "4s");
    SpringApplicationBuilder application =
        new SpringApplicationBuilder(BadConfigurationTest.App.class).web(WebApplicationType.NONE);
    if (asEnvironment) {
      Map<String, String> variables = new LinkedHashMap<>();
      keys.forEach((k, v) -> variables.put(ElectionProperties.environmentName(k), v));
      application.initializers(environment(variables));
    } else {
      application.properties(
          keys.entrySet().stream()
              .map(e -> e.getKey() + "=" + e.getValue())
              .toArray(String[]::new));
    }
    ConfigurableApplicationContext c = application.run();
    try {
      backend.check().accept(c);
    } finally {
      c.close();
    }
  }

  private static String describe(ConfigurableApplicationContext c) {
    return c.getBean(LeaseStore.class).describe();
  }

  private static List<String> tables(String url) {
    List<String> names = new ArrayList<>();
    try (Connection connection = DriverManager.getConnection(url);
        ResultSet rs =
            connection.getMetaData().getTables(null, null, "%", new String[] {"TABLE"})) {
      while (rs.next()) {
        names.add(rs.getString("TABLE_NAME"));
      }
    } catch (java.sql.SQLException e) {
      throw new AssertionError("cannot list the tables of " + url, e);
    }
    return names;
  }
}
