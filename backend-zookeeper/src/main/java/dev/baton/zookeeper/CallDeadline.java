package dev.baton.zookeeper;

import dev.baton.election.MonotonicClock;
import java.time.Duration;

/** When a call must have returned: its start on the store's clock plus the call timeout. */
record CallDeadline(MonotonicClock clock, long atNanos, Duration callTimeout) {

  static CallDeadline start(MonotonicClock clock, Duration callTimeout) {
    return new CallDeadline(clock, clock.nanoTime() + callTimeout.toNanos(), callTimeout);
  }

  /** What is left of the call, never negative. */
  long leftNanos() {
    return Math.max(0, atNanos - clock.nanoTime());
  }

  boolean passed() {
    return clock.nanoTime() - atNanos >= 0;
  }
}
