package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RunCommandTest {

  private static final ElectionConfig.Timing DEFAULTS =
      new ElectionConfig.Timing(
          Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
  private static final ElectionConfig.Timing SHORT =
      new ElectionConfig.Timing(
          Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMillis(500));

  @Test
  void the_default_grace_ends_before_the_lease_can_go_to_another_with_a_second_to_spare() {
    assertThat(RunCommand.grace(Optional.empty(), DEFAULTS)).isEqualTo(Duration.ofSeconds(4));
  }

  @Test
  void with_a_short_margin_the_default_grace_is_half_of_it() {
    assertThat(RunCommand.grace(Optional.empty(), SHORT)).isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void a_grace_up_to_the_margin_is_taken_as_asked() {
    assertThat(RunCommand.grace(Optional.of(Duration.ofSeconds(5)), DEFAULTS))
        .isEqualTo(Duration.ofSeconds(5));
    assertThat(RunCommand.grace(Optional.of(Duration.ZERO), DEFAULTS)).isEqualTo(Duration.ZERO);
  }

  @Test
  void a_grace_that_could_outlast_the_lease_is_refused_with_the_arithmetic() {
    assertThatThrownBy(() -> RunCommand.grace(Optional.of(Duration.ofSeconds(10)), DEFAULTS))
        .isInstanceOf(UsageException.class)
        .hasMessage(
            "--grace 10s is too long: it must be at most election.lease-duration - election.renew-deadline (15s - 10s = 5s),"
                + " so that the command has stopped before another candidate can be elected; shorten --grace or lengthen the lease");
  }
}
