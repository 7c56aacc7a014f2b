package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DeadlineAlarmTest {

  private final MonotonicClock clock = MonotonicClock.system();

  @Test
  void goesOffOnceItsDeadlinePassedAndCannotBeDisarmedAfterwards() {
    AtomicInteger ran = new AtomicInteger();
    DeadlineAlarm alarm =
        DeadlineAlarm.arm(
            clock, clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20), ran::incrementAndGet);

    await().atMost(Duration.ofSeconds(10)).until(() -> ran.get() == 1);
    assertThat(alarm.wentOff()).isTrue();
    assertThat(alarm.disarm()).isFalse();
  }

  @Test
  void aDisarmedAlarmNeverRunsItsAction() throws InterruptedException {
    CountDownLatch ran = new CountDownLatch(1);
    DeadlineAlarm alarm =
        DeadlineAlarm.arm(
            clock, clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50), ran::countDown);

    assertThat(alarm.disarm()).isTrue();
    assertThat(alarm.disarm()).as("again").isTrue();
    // Proving that nothing runs needs a time limit: ten times the alarm's delay.
    assertThat(ran.await(500, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(alarm.wentOff()).isFalse();
  }
}
