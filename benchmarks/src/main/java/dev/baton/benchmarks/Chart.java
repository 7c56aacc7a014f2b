package dev.baton.benchmarks;

import dev.baton.benchmarks.Results.ContenderResult;
import dev.baton.benchmarks.Results.Crash;
import java.util.List;
import java.util.Locale;

/**
 * {@code benchmarks.svg}: one row per contender (Baton on each backend, each peer library next to
 * the backend it shares a server with), graceful handover p50 and p99 on a log scale, and crash
 * failover from the cut as a multiple of the lease (p50 and worst), with split brain marked. Plain
 * SVG, written by hand: no plotting library.
 */
final class Chart {

  private static final int LABEL = 250;
  private static final int PANEL = 310;
  private static final int GAP = 40;
  private static final int ROW = 24;
  private static final int TOP = 78;
  private static final String BATON = "#2b6cb0";
  private static final String BATON_LIGHT = "#90cdf4";
  private static final String PEER = "#c05621";
  private static final String PEER_LIGHT = "#fbd38d";
  private static final double LOG_MIN = 0.1;
  private static final double LOG_MAX = 10_000;

  private Chart() {}

  static String svg(List<ContenderResult> results) {
    int width = LABEL + PANEL + GAP + PANEL + 110;
    int height = TOP + Math.max(1, results.size()) * ROW + 70;
    StringBuilder s = new StringBuilder();
    s.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n",
            width,
            height,
            width,
            height));
    s.append(
        String.format(
            Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
    text(
        s,
        10,
        20,
        "Baton (blue) and the libraries users would pick instead (orange), same servers, same lease",
        "bold",
        "start",
        14);
    int x1 = LABEL;
    int x2 = LABEL + PANEL + GAP;
    // Title and legend on lines of their own: on one line the two panels' titles ran into each
    // other.
    text(s, x1, 40, "Graceful handover, ms (log scale)", "bold", "start", 12);
    text(s, x1, 54, "p50 dark, p99 light", "normal", "start", 10);
    text(s, x2, 40, "Crash failover from the cut, × lease", "bold", "start", 12);
    text(s, x2, 54, "p50 dark, worst light", "normal", "start", 10);
    int bottom = TOP + results.size() * ROW;
    // handover grid
    for (double v = LOG_MIN; v <= LOG_MAX; v *= 10) {
      double x = x1 + logX(v);
      line(s, x, TOP - 8, x, bottom, "#e2e8f0");
      text(
          s,
          x,
          TOP - 12,
          v < 1 ? "0.1" : String.format(Locale.ROOT, "%,.0f", v),
          "normal",
          "middle",
          10);
    }
    // failover grid: 0 .. 3 × lease
    double maxRatio = 3.0;
    for (double v = 0; v <= maxRatio + 1e-9; v += 0.5) {
      double x = x2 + v / maxRatio * PANEL;
      line(s, x, TOP - 8, x, bottom, v == 1.0 ? "#4a5568" : "#e2e8f0");
      text(s, x, TOP - 12, Stats.fixed(v, 1), "normal", "middle", 10);
    }
    text(s, x2 + 1.0 / maxRatio * PANEL + 3, bottom + 14, "= lease", "normal", "start", 10);
    int y = TOP;
    for (ContenderResult r : results) {
      boolean baton = r.baton;
      String label = baton ? r.name + " (Baton)" : r.name;
      text(s, LABEL - 8, y + 16, label, baton ? "bold" : "normal", "end", 12);
      if (r.handover != null && !r.handover.stats().isEmpty()) {
        double p99 = logX(r.handover.stats().p99());
        double p50 = logX(r.handover.stats().p50());
        rect(s, x1, y + 4, p99, 16, baton ? BATON_LIGHT : PEER_LIGHT);
        rect(s, x1, y + 8, p50, 8, baton ? BATON : PEER);
        text(
            s,
            x1 + p99 + 4,
            y + 16,
            Stats.ms(r.handover.stats().p50()) + " / " + Stats.ms(r.handover.stats().p99()),
            "normal",
            "start",
            10);
      } else {
        text(s, x1 + 4, y + 16, "not measured", "normal", "start", 10);
      }
      Crash c = r.crash;
      if (c != null && !c.rounds().isEmpty()) {
        double worst = Math.min(maxRatio, c.ratio(c.fromCut().max()));
        double p50 = Math.min(maxRatio, c.ratio(c.fromCut().p50()));
        rect(s, x2, y + 4, worst / maxRatio * PANEL, 16, baton ? BATON_LIGHT : PEER_LIGHT);
        rect(s, x2, y + 8, p50 / maxRatio * PANEL, 8, baton ? BATON : PEER);
        String note =
            Stats.fixed(c.ratio(c.fromCut().p50()), 2)
                + " / "
                + Stats.fixed(c.ratio(c.fromCut().max()), 2);
        // The split-brain note follows the figures in the same text, so the two cannot overlap.
        String split =
            c.roundsWithSplitBrain() == 0
                ? ""
                : "split brain "
                    + c.roundsWithSplitBrain()
                    + "/"
                    + c.rounds().size()
                    + (c.stillLeading() > 0 ? ", ≥ " : ", up to ")
                    + Stats.ms(c.overlap().max())
                    + " ms";
        double at = Math.min(x2 + worst / maxRatio * PANEL + 4, x2 + PANEL * 0.55);
        s.append(
            String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#1a202c\">%s<tspan dx=\"8\" font-weight=\"bold\" fill=\"#c53030\">%s</tspan></text>%n",
                at,
                (double) (y + 16),
                escape(note),
                escape(split)));
      } else {
        text(s, x2 + 4, y + 16, "not measured", "normal", "start", 10);
      }
      y += ROW;
    }
    text(
        s,
        10,
        bottom + 36,
        "Each row: three candidates, each through its own TCP proxy; handover = leader leaves → another is told it leads; crash = leader's link cut, leader keeps running.",
        "normal",
        "start",
        10);
    text(
        s,
        10,
        bottom + 52,
        "Split brain = the cut leader still believed it led after its successor was told it leads. Figures and settings: benchmarks.md.",
        "normal",
        "start",
        10);
    s.append("</svg>\n");
    return s.toString();
  }

  private static double logX(double ms) {
    double v = Math.max(LOG_MIN, Math.min(LOG_MAX, ms));
    return (Math.log10(v) - Math.log10(LOG_MIN))
        / (Math.log10(LOG_MAX) - Math.log10(LOG_MIN))
        * PANEL;
  }

  private static void rect(StringBuilder s, double x, double y, double w, double h, String fill) {
    s.append(
        String.format(
            Locale.ROOT,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>%n",
            x,
            y,
            Math.max(1, w),
            h,
            fill));
  }

  private static void line(
      StringBuilder s, double x1, double y1, double x2, double y2, String stroke) {
    s.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\"/>%n",
            x1,
            y1,
            x2,
            y2,
            stroke));
  }

  private static void text(
      StringBuilder s, double x, double y, String t, String weight, String anchor, int size) {
    s.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"%s\" text-anchor=\"%s\" font-size=\"%d\" fill=\"#1a202c\">%s</text>%n",
            x,
            y,
            weight,
            anchor,
            size,
            escape(t)));
  }

  private static String escape(String t) {
    return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}
