package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Binding values: environment overrides, typed getters, their errors, and secrets. */
class ElectionPropertiesTest {

  private static Properties properties(String... keysAndValues) {
    Properties p = new Properties();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return p;
  }

  private static ElectionProperties config(String... keysAndValues) {
    return ElectionProperties.of(properties(keysAndValues));
  }

  // --- environment overrides ------------------------------------------------------------------

  @ParameterizedTest(name = "{1} overrides {0}")
  @CsvSource({
    "election.renew-deadline, ELECTION_RENEW_DEADLINE, 10s, 7s",
    "election.jdbc.url,       ELECTION_JDBC_URL,       jdbc:h2:mem:file, jdbc:postgresql://127.0.0.1/env",
    "election.candidate-id,   ELECTION_CANDIDATE_ID,   from-file, from-env",
  })
  void anEnvironmentVariableOverridesItsProperty(
      String key, String variable, String inFile, String inEnv) {
    ElectionProperties config =
        ElectionProperties.of(properties(key, inFile), Map.of(variable, inEnv));

    assertThat(ElectionProperties.environmentName(key)).isEqualTo(variable);
    assertThat(config.get(key)).contains(inEnv);
  }

  @Test
  void theOverriddenRenewDeadlineIsTheOneReadAsADuration() {
    ElectionProperties config =
        ElectionProperties.of(
            properties(ElectionProperties.RENEW_DEADLINE, "10s"),
            Map.of("ELECTION_RENEW_DEADLINE", "7s"));

    assertThat(config.duration(ElectionProperties.RENEW_DEADLINE)).contains(Duration.ofSeconds(7));
  }

  @Test
  void anEnvironmentVariableSuppliesAKeyTheFileLacks() {
    ElectionProperties config =
        ElectionProperties.of(new Properties(), Map.of("ELECTION_JDBC_URL", "jdbc:h2:mem:x"));

    assertThat(config.get("election.jdbc.url")).contains("jdbc:h2:mem:x");
  }

  @Test
  void withAnExplicitValueWinsOverTheEnvironment() {
    ElectionProperties config =
        ElectionProperties.of(
                properties(ElectionProperties.NAME, "file"), Map.of("ELECTION_NAME", "env"))
            .with(ElectionProperties.NAME, "explicit");

    assertThat(config.get(ElectionProperties.NAME)).contains("explicit");
  }

  @Test
  void propertiesOutsideTheElectionPrefixAreNotBound() {
    ElectionProperties config =
        config("election.name", "billing", "java.home", "/opt/java", "electionname", "x");

    assertThat(config.keys()).containsExactly("election.name");
    assertThat(config.get("java.home")).isEmpty();
  }

  @Test
  void valuesAreTrimmedAndABlankValueCountsAsUnset() {
    ElectionProperties config =
        config("election.name", "  billing  ", "election.candidate-id", "   ");

    assertThat(config.get("election.name")).contains("billing");
    assertThat(config.get("election.candidate-id")).isEmpty();
  }

  // --- durations ------------------------------------------------------------------------------

  @ParameterizedTest(name = "{0} reads as {1}")
  @CsvSource({"500ms, PT0.5S", "15s, PT15S", "2m, PT2M", "PT15S, PT15S"})
  void durationsAreReadWithAUnitOrAsIso8601(String written, Duration expected) {
    assertThat(
            config(ElectionProperties.LEASE_DURATION, written)
                .duration(ElectionProperties.LEASE_DURATION))
        .contains(expected);
  }

  @Test
  void anAbsentDurationIsEmptyOrTheDefault() {
    ElectionProperties config = config();

    assertThat(config.duration(ElectionProperties.RETRY_PERIOD)).isEmpty();
    assertThat(config.duration(ElectionProperties.RETRY_PERIOD, Duration.ofSeconds(2)))
        .isEqualTo(Duration.ofSeconds(2));
  }

  @ParameterizedTest(name = "''{0}'' is refused")
  @CsvSource({"15", "fifteen seconds", "1.5s", "15 sec", "-5s"})
  void anUnparseableDurationIsRefusedNamingTheKeyTheValueAndWhatIsAccepted(String written) {
    ElectionProperties config = config(ElectionProperties.RENEW_DEADLINE, written);

    assertThatThrownBy(() -> config.duration(ElectionProperties.RENEW_DEADLINE))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(ElectionProperties.RENEW_DEADLINE)
        .hasMessageContaining("'" + written + "'")
        .hasMessageContaining("500ms")
        .hasMessageContaining("15s")
        .hasMessageContaining("PT15S");
  }

  @Test
  void anUnparseableDurationFromTheEnvironmentNamesTheValueThatWasRead() {
    ElectionProperties config =
        ElectionProperties.of(
            properties(ElectionProperties.RENEW_DEADLINE, "10s"),
            Map.of("ELECTION_RENEW_DEADLINE", "10 secs"));

    assertThatThrownBy(() -> config.duration(ElectionProperties.RENEW_DEADLINE))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(ElectionProperties.RENEW_DEADLINE)
        .hasMessageContaining("'10 secs'");
  }

  // --- booleans and integers ------------------------------------------------------------------

  @ParameterizedTest(name = "''{0}'' is {1}")
  @CsvSource({"true, true", "false, false", "TRUE, true", "False, false"})
  void booleansAreTrueOrFalseInAnyCase(String written, boolean expected) {
    assertThat(config("election.alpha.tls", written).bool("election.alpha.tls", !expected))
        .isEqualTo(expected);
  }

  @Test
  void anAbsentBooleanIsTheDefault() {
    assertThat(config().bool("election.alpha.tls", true)).isTrue();
    assertThat(config().bool("election.alpha.tls", false)).isFalse();
  }

  @ParameterizedTest(name = "''{0}'' is refused")
  @CsvSource({"yes", "1", "on", "tru"})
  void anythingElseIsNotABooleanAndTheMessageSaysWhatIs(String written) {
    ElectionProperties config = config("election.alpha.tls", written);

    assertThatThrownBy(() -> config.bool("election.alpha.tls", false))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.alpha.tls")
        .hasMessageContaining("'" + written + "'")
        .hasMessageContaining("true or false");
  }

  @ParameterizedTest(name = "{0} is read within 1..10")
  @CsvSource({"1", "5", "10"})
  void integersWithinTheirRangeAreRead(int written) {
    assertThat(
            config("election.alpha.pool-size", Integer.toString(written))
                .integer("election.alpha.pool-size", 3, 1, 10))
        .isEqualTo(written);
  }

  @Test
  void anAbsentIntegerIsTheDefault() {
    assertThat(config().integer("election.alpha.pool-size", 3, 1, 10)).isEqualTo(3);
  }

  @ParameterizedTest(name = "''{0}'' is refused for 1..10")
  @CsvSource({"0", "11", "-1", "2.5", "five", "99999999999"})
  void anIntegerOutsideItsRangeOrNotANumberIsRefusedWithTheRange(String written) {
    ElectionProperties config = config("election.alpha.pool-size", written);

    assertThatThrownBy(() -> config.integer("election.alpha.pool-size", 3, 1, 10))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.alpha.pool-size")
        .hasMessageContaining("'" + written + "'")
        .hasMessageContaining("from 1 to 10");
  }

  // --- required keys --------------------------------------------------------------------------

  @Test
  void aMissingRequiredKeyIsNamedWithItsEnvironmentVariable() {
    assertThatThrownBy(() -> config().require("election.jdbc.url"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.jdbc.url")
        .hasMessageContaining("ELECTION_JDBC_URL");
  }

  @Test
  void aBlankRequiredKeyIsMissing() {
    assertThatThrownBy(() -> config("election.jdbc.url", " ").require("election.jdbc.url"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.jdbc.url");
  }

  @Test
  void aRequiredKeyMayComeFromTheEnvironmentAlone() {
    ElectionProperties config =
        ElectionProperties.of(new Properties(), Map.of("ELECTION_JDBC_URL", "jdbc:h2:mem:y"));

    assertThat(config.require("election.jdbc.url")).isEqualTo("jdbc:h2:mem:y");
  }

  // --- secrets --------------------------------------------------------------------------------

  // The environment spelling of a secret key is as secret as the dotted one: the check knew only
  // the dotted forms, and ELECTION_ZOOKEEPER_DIGEST reached elect's command.
  @ParameterizedTest(name = "{0} is a secret")
  @CsvSource({
    "election.jdbc.password",
    "election.etcd.token",
    "election.kubernetes.client-secret",
    "election.etcd.tls.key",
    "election.azure-blob.connection-string",
    "election.zookeeper.digest",
    "election.azure-blob.sas-token",
    "ELECTION_ZOOKEEPER_DIGEST",
    "ELECTION_AZURE_BLOB_CONNECTION_STRING",
    "ELECTION_AZURE_BLOB_SAS_TOKEN",
    "ELECTION_JDBC_PASSWORD",
    "ELECTION_ETCD_PASSWORD",
    "ELECTION_ETCD_TLS_KEY",
    "election.azure_blob.connection_string",
    "Election.Zookeeper.Digest"
  })
  void keysThatNameSecretsAreSecretInEverySpelling(String key) {
    assertThat(ElectionProperties.isSecret(key)).isTrue();
  }

  @ParameterizedTest(name = "{0} is not a secret")
  @CsvSource({
    "election.jdbc.url",
    "election.name",
    "election.etcd.key-prefix",
    "election.etcd.key-file",
    "ELECTION_JDBC_URL",
    "ELECTION_ZOOKEEPER_CONNECT_STRING",
    "ELECTION_ETCD_KEY_FILE",
    "ELECTION_ETCD_KEY_PREFIX",
    "ELECTION_ZOOKEEPER_ACL"
  })
  void otherKeysAreNotInAnySpelling(String key) {
    assertThat(ElectionProperties.isSecret(key)).isFalse();
  }

  @Test
  void toStringShowsValuesButHidesSecrets() {
    ElectionProperties config =
        ElectionProperties.of(
            properties(
                "election.jdbc.url",
                "jdbc:postgresql://127.0.0.1/app",
                "election.jdbc.password",
                "hunter2"),
            Map.of("ELECTION_JDBC_PASSWORD", "from-the-environment"));

    assertThat(config.toString())
        .contains("jdbc:postgresql://127.0.0.1/app")
        .contains("election.jdbc.password")
        .doesNotContain("hunter2")
        .doesNotContain("from-the-environment");
  }

  static Stream<Arguments> typedGetters() {
    return Stream.of(
        Arguments.of(
            "a boolean",
            (Consumer<ElectionProperties>) c -> c.bool("election.alpha.password", false)),
        Arguments.of(
            "an integer",
            (Consumer<ElectionProperties>) c -> c.integer("election.alpha.password", 1, 1, 10)),
        Arguments.of(
            "a duration",
            (Consumer<ElectionProperties>) c -> c.duration("election.alpha.password")));
  }

  @ParameterizedTest(name = "a secret read as {0}")
  @MethodSource("typedGetters")
  void aSecretThatDoesNotParseIsNamedButItsValueIsNotShown(
      String as, Consumer<ElectionProperties> read) {
    ElectionProperties config = config("election.alpha.password", "hunter2");

    assertThatThrownBy(() -> read.accept(config))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.alpha.password")
        .hasMessageNotContaining("hunter2");
  }

  // --- files ----------------------------------------------------------------------------------

  @Test
  void loadingAMissingFileNamesTheFile(@TempDir Path dir) {
    Path missing = dir.resolve("election.properties");

    assertThatThrownBy(() -> ElectionProperties.load(missing))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(missing.toString())
        .hasMessageContaining("does not exist");
  }

  @Test
  void loadingAFileBindsItsElectionKeys(@TempDir Path dir) throws IOException {
    // A key no environment sets, so the process's real environment cannot change the answer.
    Path file = dir.resolve("election.properties");
    Files.writeString(file, "election.baton-test-only.url=jdbc:h2:mem:loaded\nother=ignored\n");

    ElectionProperties config = ElectionProperties.load(file);

    assertThat(config.get("election.baton-test-only.url")).contains("jdbc:h2:mem:loaded");
    assertThat(config.keys()).containsExactly("election.baton-test-only.url");
  }
}
