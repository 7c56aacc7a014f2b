package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.jdbc.LeaseNotice.Kind;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LeaseNoticeTest {

  private record Heard(Kind kind, String election, long expiresInMillis) {}

  private static List<Heard> read(String payload, boolean readable) {
    List<Heard> heard = new ArrayList<>();
    assertThat(LeaseNotice.read(payload, (k, e, m) -> heard.add(new Heard(k, e, m))))
        .as("readable: %s", payload)
        .isEqualTo(readable);
    return heard;
  }

  @Test
  void aGrantARenewalAndAReleaseReadBackAsSent() {
    assertThat(read(LeaseNotice.granted("billing", 3001), true))
        .containsExactly(new Heard(Kind.GRANTED, "billing", 3001));
    assertThat(read(LeaseNotice.renewed("billing", 15001), true))
        .containsExactly(new Heard(Kind.RENEWED, "billing", 15001));
    assertThat(read(LeaseNotice.released("billing"), true))
        .containsExactly(new Heard(Kind.RELEASED, "billing", -1));
  }

  @Test
  void namesWithSeparatorsDigitsAndCharactersOutsideTheBasicPlaneSurvive() {
    String odd = "a:1 b;2:\n𝄞x:";
    assertThat(read(LeaseNotice.renewed(odd, 7), true))
        .containsExactly(new Heard(Kind.RENEWED, odd, 7));
  }

  @Test
  void aBatchPayloadListsEveryElectionWithTheSameExpiry() {
    // As the batch renewal's SQL writes it: char_length(election) || ':' || election, concatenated.
    String payload = "R3001 3:one3:two5:three";
    assertThat(read(payload, true))
        .containsExactly(
            new Heard(Kind.RENEWED, "one", 3001),
            new Heard(Kind.RENEWED, "two", 3001),
            new Heard(Kind.RENEWED, "three", 3001));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "billing",
        "A",
        "A3001",
        "A3001 ",
        "X3001 7:billing",
        "A30x1 7:billing",
        "A3001 9:billing",
        "A3001 0:",
        "F7 7:billing",
        "A3001 billing"
      })
  void aPayloadThatIsNotALeaseNoticeSaysSo(String payload) {
    read(payload, false);
  }
}
