package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A watch that reports expiry lets followers stop polling, so a watch that dies without a word (a
 * stream left on a frozen server, a client's bug) would leave a follower believing in a leader that
 * is gone and never campaigning again. Followers therefore still look now and then: every two lease
 * durations, and no more often than every 30 s. On a fake clock.
 */
class SilentWatchTest {

  private static final Duration LEASE = Duration.ofSeconds(3);

  private final FakeClock clock = new FakeClock();
  private final ManualScheduler scheduler = new ManualScheduler(clock);
  private final MemoryLeaseStore store = new MemoryLeaseStore(clock, java.time.Clock.systemUTC());
  private final AtomicInteger followerAcquires = new AtomicInteger();

  /** Subscribes, and is never heard from again. */
  private final LeaseStore silent =
      new ForwardingLeaseStore(store) {
        @Override
        public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
          followerAcquires.incrementAndGet();
          return super.tryAcquire(election, candidate, ttl);
        }

        @Override
        public Optional<Subscription> follow(String election, String candidate, Runnable changed) {
          return Optional.of(() -> {});
        }

        @Override
        public boolean watchReportsExpiry() {
          return true;
        }
      };

  @Test
  void aFollowerWhoseWatchFellSilentLooksAgainWithinThirtySecondsAndTakesOverFromALeaderThatLeft() {
    try (Elector leader = elector(store, "node-a");
        Elector follower = elector(silent, "node-b")) {
      leader.start();
      assertThat(leader.isLeader()).isTrue();
      follower.start();
      assertThat(follower.currentLeader()).contains("node-a");
      int looked = followerAcquires.get();

      // While the leader renews, the follower trusts its watch and sends nothing for 30 s.
      scheduler.advance(Duration.ofSeconds(29));
      assertThat(followerAcquires.get())
          .as("the follower's tries while its watch says nothing")
          .isEqualTo(looked);

      leader.close();
      assertThat(follower.isLeader())
          .as("told nothing by its watch, the follower does not know yet")
          .isFalse();

      scheduler.advance(Duration.ofSeconds(30).multipliedBy(2));
      assertThat(follower.isLeader()).as("the follower leads after looking itself").isTrue();
      assertThat(follower.currentLeader()).contains("node-b");
    } finally {
      store.close();
    }
  }

  private Elector elector(LeaseStore s, String candidate) {
    return Elector.builder(s)
        .election("silent-watch")
        .candidate(candidate)
        .leaseDuration(LEASE)
        .renewDeadline(Duration.ofSeconds(2))
        .retryPeriod(Duration.ofMillis(500))
        .clock(clock)
        .scheduler(scheduler)
        .executor(Runnable::run)
        .ownPool(Runnable::run)
        .build();
  }
}
