package dev.baton.election;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A monotonic clock that moves only when a test moves it. */
final class FakeClock implements MonotonicClock {

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  @Override
  public long nanoTime() {
    return nanos.get();
  }

  void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  void set(long value) {
    nanos.set(value);
  }
}
