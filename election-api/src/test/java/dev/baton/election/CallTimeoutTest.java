package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class CallTimeoutTest {

  private static final String KEY = "election.test.call-timeout";

  private static ElectionProperties properties(String... keysAndValues) {
    Properties p = new Properties();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ElectionProperties.of(p);
  }

  @Test
  void defaultsToHalfTheRenewDeadlineButAtMostThreeSeconds() {
    assertThat(CallTimeout.read(properties(), KEY)).isEqualTo(Duration.ofSeconds(3));
    assertThat(CallTimeout.read(properties(ElectionProperties.RENEW_DEADLINE, "4s"), KEY))
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(CallTimeout.read(properties(ElectionProperties.RENEW_DEADLINE, "30s"), KEY))
        .isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void aShortRenewDeadlineNeedsNoCallTimeoutOfItsOwn() {
    // The old fixed default of 3 s refused every renew deadline under 6 s unless the call timeout
    // was set too.
    assertThat(CallTimeout.read(properties(ElectionProperties.RENEW_DEADLINE, "1s"), KEY))
        .isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void acceptsExactlyHalfTheRenewDeadline() {
    assertThat(CallTimeout.read(properties(KEY, "5s"), KEY)).isEqualTo(Duration.ofSeconds(5));
    assertThat(
            CallTimeout.read(properties(KEY, "12s", ElectionProperties.RENEW_DEADLINE, "30s"), KEY))
        .isEqualTo(Duration.ofSeconds(12));
  }

  @Test
  void refusesMoreThanHalfTheRenewDeadlineNamingKeyValueAndRule() {
    assertThatThrownBy(() -> CallTimeout.read(properties(KEY, "5001ms"), KEY))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageStartingWith(
            KEY + ": 5001ms must be more than 0 and at most half the renew deadline")
        .hasMessageContaining("election.renew-deadline is 10s, so at most 5s")
        .hasMessageContaining("default");
  }

  @Test
  void refusesZeroAndNegativeInBuildersToo() {
    assertThatThrownBy(() -> CallTimeout.check("callTimeout", Duration.ZERO))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageStartingWith("callTimeout: 0s must be more than 0");
    assertThatThrownBy(() -> CallTimeout.check("callTimeout", Duration.ofSeconds(-2)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("callTimeout: 2s (negative)");
    assertThat(CallTimeout.check("callTimeout", Duration.ofMillis(1)))
        .isEqualTo(Duration.ofMillis(1));
  }
}
