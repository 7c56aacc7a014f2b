package dev.baton.testservers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.exception.InternalServerErrorException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A pause the engine refuses with runc's "unable to freeze" (a server process in uninterruptible
 * sleep; runc thaws the container again) is tried again; any other refusal is not.
 */
class ServerContainerPauseTest {

  private static final String UNABLE_TO_FREEZE =
      "{\"message\":\"Cannot pause container 395d8e22d13d: OCI runtime pause failed:"
          + " unable to freeze: unknown\"}";

  @Test
  void aPauseRefusedAsUnableToFreezeIsTriedAgainUntilItGoesThrough() {
    AtomicInteger tries = new AtomicInteger();

    ServerContainer.pauseRetrying(
        "PostgreSQL",
        () -> {
          if (tries.incrementAndGet() < 3) {
            throw new InternalServerErrorException(UNABLE_TO_FREEZE);
          }
        },
        Duration.ofSeconds(30));

    assertThat(tries).hasValue(3);
  }

  @Test
  void anyOtherRefusalFailsAtOnce() {
    AtomicInteger tries = new AtomicInteger();

    assertThatThrownBy(
            () ->
                alwaysRefused(
                    "{\"message\":\"Container 395d8e22d13d is not running\"}",
                    tries,
                    Duration.ofSeconds(30)))
        .isInstanceOf(InternalServerErrorException.class)
        .hasMessageContaining("is not running");
    assertThat(tries).hasValue(1);
  }

  @Test
  void aFreezeThatNeverGoesThroughFailsNamingTheServerTheTriesAndTheEnginesAnswer() {
    AtomicInteger tries = new AtomicInteger();

    assertThatThrownBy(() -> alwaysRefused(UNABLE_TO_FREEZE, tries, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("PostgreSQL: the engine could not freeze the container in ")
        .hasMessageContaining(" tries over 1 s; its last answer: ")
        .hasMessageContaining("unable to freeze")
        .hasCauseInstanceOf(InternalServerErrorException.class);
    assertThat(tries.get()).isGreaterThan(1);
  }

  /** Pauses with an engine that answers every try with {@code answer}, counting the tries. */
  private static void alwaysRefused(String answer, AtomicInteger tries, Duration within) {
    ServerContainer.pauseRetrying(
        "PostgreSQL",
        () -> {
          tries.incrementAndGet();
          throw new InternalServerErrorException(answer);
        },
        within);
  }
}
