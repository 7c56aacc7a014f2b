package dev.baton.benchmarks;

import java.time.Duration;

/**
 * Paces the harness: the gaps between rounds and the measurement windows. Nothing waits here for a
 * condition; waits for conditions are bounded loops over the condition itself.
 */
final class Pause {

  private Pause() {}

  static void millis(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  static void of(Duration d) {
    millis(d.toMillis());
  }

  /** Polls {@code condition} every few milliseconds until it holds or {@code timeout} passed. */
  static boolean until(java.util.function.BooleanSupplier condition, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      millis(5);
    }
    return true;
  }
}
