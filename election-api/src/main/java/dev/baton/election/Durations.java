package dev.baton.election;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses and prints durations the way configuration writes them: {@code 500ms}, {@code 15s}. */
final class Durations {

  private static final Pattern SIMPLE = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  private Durations() {}

  static Duration parse(String key, String value) {
    String text = value.trim().toLowerCase(Locale.ROOT);
    Matcher m = SIMPLE.matcher(text);
    try {
      if (m.matches()) {
        long amount = Long.parseLong(m.group(1));
        switch (m.group(2)) {
          case "ms":
            return Duration.ofMillis(amount);
          case "s":
            return Duration.ofSeconds(amount);
          case "m":
            return Duration.ofMinutes(amount);
          default:
            return Duration.ofHours(amount);
        }
      }
      if (text.startsWith("p")) {
        Duration iso = Duration.parse(value.trim().toUpperCase(Locale.ROOT));
        // PT-5S parses, but no timeout, TTL or period can be negative.
        if (!iso.isNegative()) {
          return iso;
        }
      }
    } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
      // fall through to the one message below
    }
    throw new ConfigurationException(
        key
            + ": cannot read "
            + ElectionProperties.shown(key, value)
            + " as a duration; use a whole number with a unit (500ms, 15s, 2m, 1h) or ISO-8601 (PT15S)");
  }

  /**
   * Prints {@code 500ms}, {@code 15s}, {@code 90s}, {@code 2m}, {@code 90m}, {@code 1h}: short, the
   * way users write them, and always in one unit so that {@link #parse} reads it back (to the
   * millisecond).
   */
  static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    long millis = d.toMillis();
    if (millis % 1000 != 0 || millis < 1000) {
      return millis + "ms";
    }
    long seconds = millis / 1000;
    if (seconds % 60 != 0 || seconds < 60) {
      return seconds + "s";
    }
    long minutes = seconds / 60;
    return minutes % 60 != 0 ? minutes + "m" : minutes / 60 + "h";
  }
}
