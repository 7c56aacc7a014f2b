package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ArgumentsTest {

  @Test
  void run_reads_every_option_and_the_command_after_the_separator() {
    Arguments.Invocation parsed =
        Arguments.parse(
            "run",
            "--config",
            "e.properties",
            "--name=billing",
            "--restart",
            "--grace",
            "3s",
            "--",
            "sh",
            "-c",
            "echo hi");

    assertThat(parsed)
        .isEqualTo(
            new Arguments.Run(
                Optional.of(Path.of("e.properties")),
                Optional.of("billing"),
                true,
                Optional.of(Duration.ofSeconds(3)),
                List.of("sh", "-c", "echo hi")));
  }

  @Test
  void run_takes_the_first_word_that_is_not_an_option_as_the_command() {
    Arguments.Run run =
        (Arguments.Run) Arguments.parse("run", "--name", "x", "my-job", "--its-own-flag");

    assertThat(run.command()).containsExactly("my-job", "--its-own-flag");
    assertThat(run.restart()).isFalse();
    assertThat(run.grace()).isEmpty();
  }

  @Test
  void run_without_a_command_says_where_it_goes() {
    assertThatThrownBy(() -> Arguments.parse("run", "--name", "x", "--"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("run needs a COMMAND")
        .hasMessageContaining("-- COMMAND [ARGS...]");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "run --nmae x -- true            | run: unknown option '--nmae'; accepted: --config, --name, --restart, --grace",
        "run --grace soon -- true         | --grace: cannot read 'soon' as a duration; use a whole number with a unit (500ms, 15s, 2m, 1h) or ISO-8601 (PT15S)",
        "run --grace -5s -- true          | --grace: cannot read '-5s' as a duration",
        "run --grace                      | --grace needs a value",
        "run --name -- true               | --name needs a value",
        "run --restart=yes -- true        | --restart takes no value, but got 'yes'",
        "run --name= -- true              | --name must not be blank, but was ''",
        "status --watch --follow          | status: unknown option '--follow'; accepted: --config, --name, --watch",
        "status billing                   | status takes no positional arguments, but got 'billing'; name the election with --name",
        "demo now                         | demo takes no arguments, but got 'now'",
        "elect                            | unknown command 'elect'; use run, status, demo, help or --version",
      })
  void refuses_what_it_cannot_act_on_and_says_what_is_accepted(String args, String message) {
    assertThatThrownBy(() -> Arguments.parse(args.trim().split("\\s+")))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining(message.trim());
  }

  @Test
  void no_arguments_at_all_asks_for_a_command() {
    assertThatThrownBy(Arguments::parse)
        .isInstanceOf(UsageException.class)
        .hasMessage("missing command; use run, status, demo, help or --version");
  }

  @ParameterizedTest(name = "{0} is {1} ms")
  @CsvSource({
    "500ms, 500",
    "10s, 10000",
    "2m, 120000",
    "1h, 3600000",
    "PT1.5S, 1500",
    "pt2s, 2000"
  })
  void durations_read_as_in_the_configuration(String text, long millis) {
    assertThat(Arguments.duration("--grace", text)).isEqualTo(Duration.ofMillis(millis));
  }

  @Test
  void status_and_demo_and_help() {
    assertThat(Arguments.parse("status", "--name", "x", "--watch"))
        .isEqualTo(
            new Arguments.Status(Optional.empty(), Optional.of("x"), true, Arguments.Output.TEXT));
    assertThat(Arguments.parse("status"))
        .isEqualTo(
            new Arguments.Status(Optional.empty(), Optional.empty(), false, Arguments.Output.TEXT));
    assertThat(Arguments.parse("demo")).isEqualTo(new Arguments.Demo());
    assertThat(Arguments.parse("--help")).isEqualTo(new Arguments.Help());
  }

  @Test
  void version_as_an_option_or_a_command() {
    assertThat(Arguments.parse("--version")).isEqualTo(new Arguments.Version());
    assertThat(Arguments.parse("version")).isEqualTo(new Arguments.Version());
    assertThatThrownBy(() -> Arguments.parse("--version", "--json"))
        .isInstanceOf(UsageException.class)
        .hasMessage("--version takes no arguments, but got '--json'");
  }

  @Test
  void status_output_is_text_or_json_in_either_spelling() {
    assertThat(Arguments.parse("status", "--output", "json"))
        .isEqualTo(
            new Arguments.Status(Optional.empty(), Optional.empty(), false, Arguments.Output.JSON));
    assertThat(Arguments.parse("status", "--output=text", "--name", "x"))
        .isEqualTo(
            new Arguments.Status(Optional.empty(), Optional.of("x"), false, Arguments.Output.TEXT));
  }

  @Test
  void an_output_format_that_does_not_exist_names_the_value_and_those_accepted() {
    assertThatThrownBy(() -> Arguments.parse("status", "--output", "yaml"))
        .isInstanceOf(UsageException.class)
        .hasMessage("--output must be text or json, but was 'yaml'");
    assertThatThrownBy(() -> Arguments.parse("status", "--output"))
        .isInstanceOf(UsageException.class)
        .hasMessage("--output needs a value");
  }

  @Test
  void json_is_printed_once_so_it_does_not_combine_with_watch() {
    assertThatThrownBy(() -> Arguments.parse("status", "--watch", "--output", "json"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("--output json")
        .hasMessageContaining("cannot be combined with --watch");
  }

  @Test
  void the_log_names_the_program_but_not_its_arguments_which_may_be_secret() {
    assertThat(Arguments.program(List.of("deploy", "--password", "hunter2")))
        .isEqualTo("'deploy' (2 arguments)")
        .doesNotContain("hunter2");
    assertThat(Arguments.program(List.of("sleep", "600"))).isEqualTo("'sleep' (1 argument)");
    assertThat(Arguments.program(List.of("true"))).isEqualTo("'true'");
  }
}
