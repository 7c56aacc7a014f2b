package dev.baton.cli;

import java.time.Duration;

/** Durations for people: {@code 45ms}, {@code 3.2s}, {@code 15s}, {@code 2m}. */
final class Durations {

  private Durations() {}

  static String format(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + "ms";
    }
    if (ms % 1000 == 0) {
      long s = ms / 1000;
      return s % 60 == 0 && s >= 60 ? s / 60 + "m" : s + "s";
    }
    if (ms < 60_000) {
      return String.format(java.util.Locale.ROOT, "%.1fs", ms / 1000.0);
    }
    return ms / 1000 + "s";
  }
}
