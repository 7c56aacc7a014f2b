package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad arguments and configuration end with status 2 and a message, before anything is started. */
class ElectTest {

  @TempDir Path dir;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int elect(String... args) {
    return Elect.execute(
        args,
        dir,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private void nothingStarted() {
    assertThat(dir.resolve(".baton"))
        .as("the embedded database must not have been created")
        .doesNotExist();
  }

  private Path config(String text) throws IOException {
    return Files.writeString(dir.resolve("election.properties"), text);
  }

  @Test
  void an_unknown_option_is_status_2_with_the_usage() {
    assertThat(elect("run", "--nmae", "x", "--", "true")).isEqualTo(2);
    assertThat(err()).contains("elect: run: unknown option '--nmae'").contains("usage: elect run");
    nothingStarted();
  }

  @Test
  void a_missing_configuration_file_is_named() {
    assertThat(elect("run", "--config", dir.resolve("nope.properties").toString(), "--", "true"))
        .isEqualTo(2);
    assertThat(err())
        .contains(
            "elect: configuration: configuration file "
                + dir.resolve("nope.properties")
                + " does not exist");
    nothingStarted();
  }

  @Test
  void a_duration_that_does_not_parse_names_key_and_value() throws IOException {
    Path file = config("election.lease-duration=fast\n");

    assertThat(elect("run", "--config", file.toString(), "--", "true")).isEqualTo(2);
    assertThat(err()).contains("election.lease-duration: cannot read 'fast' as a duration");
    nothingStarted();
  }

  @Test
  void inconsistent_timing_is_refused() throws IOException {
    Path file = config("election.lease-duration=5s\nelection.renew-deadline=6s\n");

    assertThat(elect("run", "--config", file.toString(), "--", "true")).isEqualTo(2);
    assertThat(err())
        .contains(
            "renewDeadline (election.renew-deadline) must be shorter than leaseDuration (5s), but was 6s");
    nothingStarted();
  }

  @Test
  void a_grace_longer_than_the_lease_margin_is_refused() {
    assertThat(elect("run", "--grace", "10s", "--", "true")).isEqualTo(2);
    assertThat(err())
        .contains("--grace 10s is too long")
        .contains("at most 4s")
        .contains("(15s - 10s - 1s)");
    nothingStarted();
  }

  @Test
  void an_unknown_backend_lists_those_present() throws IOException {
    Path file = config("election.backend=nomad\n");

    assertThat(elect("status", "--config", file.toString())).isEqualTo(2);
    assertThat(err())
        .contains("election.backend: unknown backend 'nomad'; found on the classpath: ")
        .contains("etcd")
        .contains("jdbc")
        .contains("kubernetes")
        .contains("zookeeper")
        .contains("consul");
    nothingStarted();
  }

  @Test
  void a_misspelt_key_is_refused_as_a_likely_typo() throws IOException {
    Path file = config("election.jdbc.urll=jdbc:h2:mem:x\nelection.jdbc.url=jdbc:h2:mem:x\n");

    assertThat(elect("run", "--config", file.toString(), "--", "true")).isEqualTo(2);
    assertThat(err()).contains("unknown configuration key election.jdbc.urll (a typo?)");
    nothingStarted();
  }

  @Test
  void a_command_that_does_not_exist_is_refused_before_campaigning_with_127_as_a_shell_gives() {
    assertThat(elect("run", "--", "no-such-command-for-elect")).isEqualTo(127);
    assertThat(err()).contains("COMMAND 'no-such-command-for-elect' is not found on PATH");
    nothingStarted();
  }

  @Test
  void a_command_path_that_is_not_executable_is_refused_with_127() throws IOException {
    Files.writeString(dir.resolve("job.sh"), "echo hi\n");

    assertThat(elect("run", "--", "./job.sh")).isEqualTo(127);
    assertThat(err()).contains("COMMAND './job.sh' is not an executable file");
    nothingStarted();
  }

  @Test
  void help_is_status_0_on_stdout() {
    assertThat(elect("help")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("usage: elect run")
        .contains("Exit status");
  }

  @Test
  void help_lists_every_backend_on_the_class_path_with_the_property_that_chooses_it() {
    assertThat(elect("help")).isZero();
    String help = out.toString(StandardCharsets.UTF_8);
    for (String backend :
        List.of("azure-blob", "dynamodb", "etcd", "file", "jdbc", "kubernetes", "zookeeper")) {
      assertThat(help).containsPattern("(?m)^  " + backend + " +election\\.backend=" + backend);
    }
    assertThat(help)
        .contains("election.backend=file (the embedded default when no backend is configured)")
        .contains("election.jdbc.url")
        .contains("election.zookeeper.connect-string");
  }

  @Test
  void version_prints_what_the_build_wrote_and_the_java_it_runs_on() {
    String built = System.getProperty("elect.expectedVersion");
    assertThat(built).as("surefire passes the POM's version").isNotBlank();

    assertThat(elect("--version")).isZero();
    String first = out.toString(StandardCharsets.UTF_8);
    assertThat(first)
        .startsWith("elect " + built + System.lineSeparator())
        .contains("Java " + Runtime.version() + " (");
    out.reset();
    assertThat(elect("version")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(first);
  }

  @Test
  void status_as_json_on_the_embedded_default_says_nobody_leads_with_status_1() throws IOException {
    assertThat(elect("status", "--output", "json")).isEqualTo(1);

    JsonNode status = new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));
    assertThat(status.get("schema").asInt()).isEqualTo(1);
    assertThat(status.get("election").asText()).isEqualTo("default");
    assertThat(status.get("backend").asText()).isEqualTo("file");
    assertThat(status.get("store").asText()).contains(dir.resolve(".baton").toString());
    assertThat(status.get("leader").isNull()).isTrue();
    assertThat(status.get("fencing_token").isNull()).isTrue();
  }

  @Test
  void an_output_format_that_does_not_exist_is_status_2_and_touches_nothing() {
    assertThat(elect("status", "--output", "yaml")).isEqualTo(2);
    assertThat(err()).contains("elect: --output must be text or json, but was 'yaml'");
    nothingStarted();
  }
}
