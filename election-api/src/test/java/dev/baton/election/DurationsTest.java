package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

  private static final String KEY = "election.lease-duration";

  @ParameterizedTest(name = "''{0}'' is {1}")
  @CsvSource({
    "500ms,    PT0.5S",
    "15s,      PT15S",
    "2m,       PT2M",
    "1h,       PT1H",
    "0s,       PT0S",
    "15S,      PT15S",
    "'15 s',   PT15S",
    "' 2m ',   PT2M",
    "PT15S,    PT15S",
    "pt0.5s,   PT0.5S",
    "PT1M30S,  PT1M30S",
  })
  void parsesANumberWithAUnitOrIso8601(String written, Duration expected) {
    assertThat(Durations.parse(KEY, written)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "''{0}'' is refused")
  @ValueSource(
      strings = {
        "",
        "15",
        "s",
        "1.5s",
        "15 sec",
        "15d",
        "-5s",
        "PT-5S",
        "-PT5S",
        "P",
        "fifteen",
        "99999999999999999999s",
        "9999999999999999h"
      })
  void refusesAnythingElseNamingTheKeyTheValueAndWhatIsAccepted(String written) {
    assertThatThrownBy(() -> Durations.parse(KEY, written))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(KEY)
        .hasMessageContaining("'" + written + "'")
        .hasMessageContaining("500ms, 15s, 2m, 1h")
        .hasMessageContaining("PT15S");
  }

  @ParameterizedTest(name = "{0} prints as {1}")
  @CsvSource({
    "PT0S,      0s",
    "PT0.5S,    500ms",
    "PT1.5S,    1500ms",
    "PT15S,     15s",
    "PT90S,     90s",
    "PT2M,      2m",
    "PT90M,     90m",
    "PT1H,      1h",
    "PT36H,     36h",
  })
  void printsTheShortFormUsersWrite(Duration duration, String printed) {
    assertThat(Durations.format(duration)).isEqualTo(printed);
  }

  @ParameterizedTest(name = "{0} survives format then parse")
  @ValueSource(
      strings = {
        "PT0S",
        "PT0.001S",
        "PT0.5S",
        "PT1.5S",
        "PT15S",
        "PT59S",
        "PT1M",
        "PT1M30S",
        "PT2M",
        "PT90M",
        "PT1H",
        "PT1H30M",
        "PT1H0.5S",
        "PT25H"
      })
  void everyWholeMillisecondDurationPrintsAsSomethingParseReadsBack(Duration duration) {
    assertThat(Durations.parse(KEY, Durations.format(duration))).isEqualTo(duration);
  }

  @ParameterizedTest(name = "''{0}'' survives parse then format")
  @ValueSource(strings = {"500ms", "1500ms", "15s", "90s", "2m", "90m", "1h", "36h"})
  void theShortFormIsPrintedBackUnchanged(String written) {
    assertThat(Durations.format(Durations.parse(KEY, written))).isEqualTo(written);
  }
}
