package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class FailureStreakTest {

  @Test
  @DisplayName(
      "a store failure whose causes form a loop is told with each cause once, not walked for ever")
  void causesThatLoopAreToldOnce() {
    RuntimeException outer = new RuntimeException("renewal failed");
    RuntimeException inner = new RuntimeException("connection reset", outer);
    outer.initCause(inner);
    FailureStreak streak =
        new FailureStreak(LoggerFactory.getLogger(FailureStreakTest.class), "test", "a store");

    // The engine tells every failure through here before it guards the term's deadline: a walk
    // that never ends would leave a leader with no deadline and its work running.
    String told =
        assertTimeoutPreemptively(
            Duration.ofSeconds(10),
            () -> {
              streak.failed("renewal failed", outer);
              return FailureStreak.causes(outer);
            });

    assertThat(told)
        .isEqualTo(
            "java.lang.RuntimeException: renewal failed; caused by java.lang.RuntimeException: connection reset");
  }
}
