package dev.baton.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The clock {@code elect} shares with its guard: {@code /proc/uptime}, CLOCK_BOOTTIME in hundredths
 * of a second. The guard is bash and can read no other monotonic clock; reading the same one here
 * lets elect hand it an absolute deadline. It never jumps, and unlike the JVM's {@code nanoTime}
 * (CLOCK_MONOTONIC) it runs on through a suspend, so a deadline on it comes earlier, never later.
 */
final class Uptime {

  static final Path FILE = Path.of("/proc/uptime");

  private Uptime() {}

  /** Hundredths of a second since boot, rounded down: never later than the truth. */
  static long hundredths() {
    String text;
    try {
      text = Files.readString(FILE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + FILE, e);
    }
    return parse(text);
  }

  static long parse(String uptime) {
    String seconds = uptime.trim().split("\\s+")[0];
    return new BigDecimal(seconds).movePointRight(2).longValue();
  }
}
