package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ElectionConfigTest {

  @TempDir Path dir;

  private static ElectionProperties props(String... keyValues) {
    Properties p = new Properties();
    for (int i = 0; i < keyValues.length; i += 2) {
      p.setProperty(keyValues[i], keyValues[i + 1]);
    }
    return ElectionProperties.of(p);
  }

  @Test
  void without_backend_settings_it_is_lease_files_under_dot_baton_shared_by_processes() {
    ElectionConfig config = ElectionConfig.resolve(props(), Optional.empty(), dir);

    ElectionProperties p = config.properties();
    assertThat(config.isEmbedded()).isTrue();
    assertThat(p.get(ElectionProperties.BACKEND)).contains("file");
    assertThat(p.get(ElectionConfig.FILE_DIRECTORY))
        .contains(dir.toAbsolutePath().resolve(".baton/leases").toString());
    assertThat(config.election()).isEqualTo("default");
    assertThat(p.get(ElectionConfig.FILE_CALL_TIMEOUT)).contains("1000ms");
    assertThat(config.describeBackend())
        .contains(dir.toAbsolutePath().resolve(".baton").toString());
  }

  @Test
  void the_embedded_call_timeout_stays_within_half_the_renew_deadline() {
    ElectionConfig config =
        ElectionConfig.resolve(
            props(ElectionProperties.RENEW_DEADLINE, "1s"), Optional.empty(), dir);

    assertThat(config.properties().get(ElectionConfig.FILE_CALL_TIMEOUT)).contains("500ms");
  }

  @Test
  void an_explicit_call_timeout_is_kept() {
    ElectionConfig config =
        ElectionConfig.resolve(
            props(ElectionConfig.JDBC_CALL_TIMEOUT, "700ms"), Optional.empty(), dir);

    // A jdbc key makes jdbc the configured backend, so this is not the embedded default any more.
    assertThat(config.isEmbedded()).isFalse();
    assertThat(config.properties().get(ElectionConfig.JDBC_CALL_TIMEOUT)).contains("700ms");
  }

  @Test
  void name_overrides_the_configured_election_name() {
    ElectionConfig config =
        ElectionConfig.resolve(
            props(ElectionProperties.NAME, "from-file"), Optional.of("from-flag"), dir);

    assertThat(config.election()).isEqualTo("from-flag");
    assertThat(
            ElectionConfig.resolve(
                    props(ElectionProperties.NAME, "from-file"), Optional.empty(), dir)
                .election())
        .isEqualTo("from-file");
  }

  @Test
  void settings_of_one_backend_choose_it_although_every_backend_jar_is_present() {
    ElectionConfig config =
        ElectionConfig.resolve(
            props(ElectionConfig.JDBC_URL, "jdbc:postgresql://127.0.0.1:5432/test"),
            Optional.empty(),
            dir);

    assertThat(config.isEmbedded()).isFalse();
    assertThat(config.properties().get(ElectionProperties.BACKEND)).contains("jdbc");
    assertThat(config.describeBackend()).isEqualTo("jdbc");
  }

  @Test
  void settings_of_two_backends_need_a_choice_and_the_message_lists_them() {
    ElectionConfig config =
        ElectionConfig.resolve(
            props(
                ElectionConfig.JDBC_URL,
                "jdbc:postgresql://127.0.0.1:5432/test",
                "election.etcd.endpoints",
                "http://127.0.0.1:2379"),
            Optional.empty(),
            dir);

    assertThatThrownBy(config::openStore)
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(
            "election.backend is not set and several backends are on the classpath; choose one of:")
        .hasMessageContaining("etcd")
        .hasMessageContaining("jdbc")
        .hasMessageContaining("zookeeper")
        .hasMessageContaining("kubernetes");
  }

  @Test
  void timing_is_checked_without_touching_the_backend() {
    ElectionConfig config =
        ElectionConfig.resolve(
            props(ElectionProperties.LEASE_DURATION, "3s", ElectionProperties.RENEW_DEADLINE, "5s"),
            Optional.empty(),
            dir);

    assertThatThrownBy(config::checkTiming)
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(
            "renewDeadline (election.renew-deadline) must be shorter than leaseDuration (3s), but was 5s");
    assertThat(dir.resolve(".baton")).doesNotExist();
  }

  @Test
  void timing_as_configured() {
    ElectionConfig.Timing t =
        ElectionConfig.resolve(
                props(
                    ElectionProperties.LEASE_DURATION,
                    "3s",
                    ElectionProperties.RENEW_DEADLINE,
                    "2s",
                    ElectionProperties.RETRY_PERIOD,
                    "500ms"),
                Optional.empty(),
                dir)
            .checkTiming();

    assertThat(t)
        .isEqualTo(
            new ElectionConfig.Timing(
                Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMillis(500)));
  }
}
