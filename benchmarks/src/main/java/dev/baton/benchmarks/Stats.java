package dev.baton.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** Order statistics of a sample of durations in milliseconds (nearest-rank percentiles). */
record Stats(int count, double p50, double p90, double p99, double max, double min, double mean) {

  static final Stats EMPTY =
      new Stats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

  static Stats of(List<Double> values) {
    if (values.isEmpty()) {
      return EMPTY;
    }
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    double sum = 0;
    for (double v : sorted) {
      sum += v;
    }
    return new Stats(
        sorted.size(),
        rank(sorted, 0.50),
        rank(sorted, 0.90),
        rank(sorted, 0.99),
        sorted.get(sorted.size() - 1),
        sorted.get(0),
        sum / sorted.size());
  }

  private static double rank(List<Double> sorted, double q) {
    int index = (int) Math.ceil(q * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }

  boolean isEmpty() {
    return count == 0;
  }

  /** Milliseconds for a table: one decimal under 10 ms, whole numbers above. */
  static String ms(double v) {
    if (Double.isNaN(v)) {
      return "–";
    }
    if (v < 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.0f", v);
  }

  /** "p50 6.4 ms, p99 17 ms", as the targets quote a latency. */
  String p50AndP99() {
    return "p50 " + ms(p50) + " ms, p99 " + ms(p99) + " ms";
  }

  /** How a target's "met" column reads. */
  static String met(boolean met) {
    return met ? "yes" : "**no**";
  }

  static String fixed(double v, int decimals) {
    if (Double.isNaN(v)) {
      return "–";
    }
    return String.format(Locale.ROOT, "%." + decimals + "f", v);
  }
}
