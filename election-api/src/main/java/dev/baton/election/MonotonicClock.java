package dev.baton.election;

/**
 * The clock that measures durations and deadlines: monotonic nanoseconds, unrelated to the time of
 * day and never going back. Injected so that tests can advance time by hand.
 */
@FunctionalInterface
public interface MonotonicClock {

  long nanoTime();

  static MonotonicClock system() {
    return System::nanoTime;
  }
}
