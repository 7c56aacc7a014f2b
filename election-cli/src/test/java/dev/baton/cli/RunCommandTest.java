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
  void a_grace_up_to_the_default_is_taken_as_asked() {
    assertThat(RunCommand.grace(Optional.of(Duration.ofSeconds(4)), DEFAULTS))
        .isEqualTo(Duration.ofSeconds(4));
    assertThat(RunCommand.grace(Optional.of(Duration.ofMillis(500)), SHORT))
        .isEqualTo(Duration.ofMillis(500));
    assertThat(RunCommand.grace(Optional.of(Duration.ZERO), DEFAULTS)).isEqualTo(Duration.ZERO);
  }

  // A grace of exactly lease - renew deadline was accepted: the SIGKILL then comes at the very
  // moment the lease can pass, and any lateness of the guard or the kernel is an overlap.
  @Test
  void a_grace_that_leaves_no_margin_before_the_lease_can_pass_is_refused_naming_both_values() {
    assertThatThrownBy(() -> RunCommand.grace(Optional.of(Duration.ofSeconds(5)), DEFAULTS))
        .isInstanceOf(UsageException.class)
        .hasMessage(
            "--grace 5s is too long: it must be at most 4s, which is election.lease-duration - election.renew-deadline"
                + " less a reserve of half of that, at most 1s, for the guard and the kernel to act (15s - 10s - 1s),"
                + " so that the command has stopped before another candidate can be elected; shorten --grace or lengthen the lease");
    assertThatThrownBy(() -> RunCommand.grace(Optional.of(Duration.ofMillis(501)), SHORT))
        .isInstanceOf(UsageException.class)
        .hasMessageStartingWith("--grace 501ms is too long: it must be at most 500ms,")
        .hasMessageContaining("(3s - 2s - 500ms)");
  }
}
