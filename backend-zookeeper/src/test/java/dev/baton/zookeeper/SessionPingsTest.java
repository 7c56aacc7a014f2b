package dev.baton.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SessionPingsTest {

  @Test
  void theClientPingsAfterAThirdOfShortSessionsAndASecondLessOnceThatThirdIsOverTwoSeconds() {
    assertThat(SessionPings.idleBeforePing(Duration.ofSeconds(2))).hasMillis(666);
    assertThat(SessionPings.idleBeforePing(Duration.ofSeconds(3))).hasMillis(1000);
    assertThat(SessionPings.idleBeforePing(Duration.ofSeconds(6))).hasMillis(1000);
    assertThat(SessionPings.idleBeforePing(Duration.ofSeconds(15))).hasMillis(4000);
    assertThat(SessionPings.idleBeforePing(Duration.ofSeconds(60))).hasMillis(10_000);
  }

  @Test
  void aRenewalIsAskedForJustBeforeThePingItReplaces() {
    assertThat(SessionPings.renewalPeriod(Duration.ofSeconds(3))).hasMillis(975);
    assertThat(SessionPings.renewalPeriod(Duration.ofSeconds(15))).hasMillis(3975);
  }
}
