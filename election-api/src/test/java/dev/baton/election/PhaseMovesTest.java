package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.Phase.Kind;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The elector's phases and the only moves between them, as one table. */
class PhaseMovesTest {

  static Stream<Arguments> everyPair() {
    return Stream.of(Kind.values())
        .flatMap(from -> Stream.of(Kind.values()).map(to -> Arguments.of(from, to)));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("everyPair")
  @DisplayName("only these moves are legal: start, elected, step down, close, stopped")
  void legalMoves(Kind from, Kind to) {
    boolean expected =
        (from == Kind.STOPPED && to == Kind.FOLLOWING)
            || (from == Kind.FOLLOWING && (to == Kind.LEADING || to == Kind.STOPPING))
            || (from == Kind.LEADING && (to == Kind.FOLLOWING || to == Kind.STOPPING))
            || (from == Kind.STOPPING && to == Kind.STOPPED);
    assertThat(Phase.legal(from, to)).isEqualTo(expected);
  }

  @Test
  @DisplayName("an illegal move fails loudly and leaves the phase as it was")
  void illegalMoveFails() {
    Campaign campaign =
        new Campaign(
            Elector.builder(new MemoryLeaseStore())
                .election("billing")
                .candidate("a")
                .executor(Runnable::run)
                .ownPool(Runnable::run)
                .leaseDuration(Duration.ofSeconds(15)));
    assertThatThrownBy(() -> campaign.transition(new Stopping(campaign), null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no move from STOPPED to STOPPING");
    assertThat(campaign.published()).isEqualTo(Kind.STOPPED);
  }
}
