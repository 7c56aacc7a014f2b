package dev.baton.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class StatsTest {

  @Test
  void percentilesAreNearestRankOfTheSortedSample() {
    List<Double> oneToHundred =
        new ArrayList<>(IntStream.rangeClosed(1, 100).mapToObj(i -> (double) (101 - i)).toList());

    Stats s = Stats.of(oneToHundred);

    assertThat(s.count()).isEqualTo(100);
    assertThat(s.p50()).isEqualTo(50);
    assertThat(s.p90()).isEqualTo(90);
    assertThat(s.p99()).isEqualTo(99);
    assertThat(s.max()).isEqualTo(100);
    assertThat(s.min()).isEqualTo(1);
    assertThat(s.mean()).isEqualTo(50.5);
  }

  @Test
  void aSmallSampleReportsItsLargestValueAsTheHighPercentiles() {
    Stats s = Stats.of(List.of(3.0, 1.0, 2.0));

    assertThat(s.p50()).isEqualTo(2);
    assertThat(s.p99()).isEqualTo(3);
  }

  @Test
  void anEmptySampleHasNoFigures() {
    assertThat(Stats.of(List.of()).isEmpty()).isTrue();
    assertThat(Stats.ms(Stats.EMPTY.p50())).isEqualTo("–");
  }

  @Test
  void millisecondsShowOneDecimalOnlyBelowTen() {
    assertThat(Stats.ms(3.14159)).isEqualTo("3.1");
    assertThat(Stats.ms(31.4159)).isEqualTo("31");
  }
}
