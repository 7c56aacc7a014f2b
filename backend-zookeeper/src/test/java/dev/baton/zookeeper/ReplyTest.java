package dev.baton.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import java.time.Duration;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;

class ReplyTest {

  private static final Duration TIMEOUT = Duration.ofMillis(50);

  private static CallDeadline deadline() {
    return CallDeadline.start(MonotonicClock.system(), TIMEOUT);
  }

  @Test
  void anAnswerThatArrivedInTimeIsReturned() throws Exception {
    Reply<String> reply = new Reply<>();
    assertThat(reply.answer("granted")).isTrue();

    assertThat(reply.await(deadline(), "e", "tryAcquire")).isEqualTo("granted");
  }

  @Test
  void zooKeepersErrorIsThrownAsItsKeeperException() {
    Reply<String> reply = new Reply<>();
    reply.fail(KeeperException.Code.NONODE.intValue(), "/baton/elections/e/lease");

    assertThatThrownBy(() -> reply.await(deadline(), "e", "renew"))
        .isInstanceOfSatisfying(
            KeeperException.NoNodeException.class,
            e -> assertThat(e.getPath()).isEqualTo("/baton/elections/e/lease"));
  }

  @Test
  void noAnswerWithinTheDeadlineFailsAsUnknownAndALaterAnswerIsRefused() {
    Reply<String> reply = new Reply<>();

    assertThatThrownBy(() -> reply.await(deadline(), "e", "tryAcquire for 'a'"))
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining("election 'e'")
        .hasMessageContaining("tryAcquire for 'a'")
        .hasMessageContaining("call timeout (PT0.05S)");
    assertThat(reply.answer("granted too late")).as("the sender learns it must undo").isFalse();
  }

  @Test
  void anInterruptedWaitFailsAsUnknownKeepsTheInterruptAndRefusesTheLaterAnswer() {
    Reply<String> reply = new Reply<>();
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> reply.await(deadline(), "e", "renew"))
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining("interrupted");
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(reply.fail(KeeperException.Code.CONNECTIONLOSS.intValue(), null)).isFalse();
  }
}
