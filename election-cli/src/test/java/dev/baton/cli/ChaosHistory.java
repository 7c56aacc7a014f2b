package dev.baton.cli;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What a {@link Chaos} run did and saw, and the checks on it: accepted tokens never go backwards;
 * no two commands of different terms ran unpaused at the same time for more than {@link
 * #OVERLAP_TOLERANCE}, except a command resumed with its whole paused machine until its guard or
 * elect stopped it (its late writes refused by fencing); the report with the figures.
 */
final class ChaosHistory {

  /** Two commands writing at once for longer than this is a violation (issue 20's bound). */
  static final long OVERLAP_TOLERANCE = TimeUnit.MILLISECONDS.toNanos(100);

  /**
   * A fault against the leader and what followed. {@code failover} is -1 when no new leader was
   * expected or seen.
   */
  record Fault(
      String kind,
      String candidate,
      long token,
      long at,
      long measuredFrom,
      boolean servedStore,
      long failover,
      long bound) {}

  private final long t0;
  private final String label;
  private final List<String> narration = new ArrayList<>();
  private final List<Fault> faults = new ArrayList<>();

  /** Per candidate: when its command was paused (with its machine, or alone). */
  private final Map<String, List<long[]>> commandPauses = new HashMap<>();

  /** Per candidate: when its whole machine was paused, the command with it. */
  private final Map<String, List<long[]>> machinePauses = new HashMap<>();

  private final List<String> violations = new ArrayList<>();
  private long worstOverlap;

  ChaosHistory(long t0, String label) {
    this.t0 = t0;
    this.label = label;
  }

  void fault(Fault f) {
    faults.add(f);
  }

  void commandPaused(String candidate, long from, long to, boolean withItsMachine) {
    commandPauses.computeIfAbsent(candidate, k -> new ArrayList<>()).add(new long[] {from, to});
    if (withItsMachine) {
      machinePauses.computeIfAbsent(candidate, k -> new ArrayList<>()).add(new long[] {from, to});
    }
  }

  void violation(String what) {
    violations.add(what);
  }

  List<String> violations() {
    return violations;
  }

  void say(String what) {
    String line = at(System.nanoTime()) + "  " + what;
    narration.add(line);
    System.out.println("[chaos " + label + "] " + line);
  }

  String at(long nanos) {
    return String.format(Locale.ROOT, "+%6.2fs", (nanos - t0) / 1e9);
  }

  static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  /**
   * No two commands of different terms write unpaused at the same time. The one exception the
   * physics allow: a leader whose whole machine was paused runs again when it resumes, until its
   * guard (whose deadline passed during the pause) or its elect stops it; that must happen within
   * the grace period and the allowance, and fencing refuses its late writes (checked apart:
   * accepted tokens never go backwards). A pause of elect's JVM alone, or of elect's process group,
   * is no excuse: the command was not paused.
   */
  List<String> checkOverlaps(WriterLog w, long excusedAfterResume) {
    List<String> stale = new ArrayList<>();
    List<WriterLog.Instance> all = new ArrayList<>(w.instances.values());
    for (int i = 0; i < all.size(); i++) {
      for (int j = i + 1; j < all.size(); j++) {
        WriterLog.Instance a = all.get(i);
        WriterLog.Instance b = all.get(j);
        if (a.token == b.token) {
          continue;
        }
        WriterLog.Instance older = a.token < b.token ? a : b;
        WriterLog.Instance newer = older == a ? b : a;
        List<long[]> both = unpaused(older, newer);
        if (both.isEmpty()) {
          continue;
        }
        long start = both.get(0)[0];
        long end = both.get(both.size() - 1)[1];
        long overlap = both.stream().mapToLong(x -> x[1] - x[0]).sum();
        Optional<Long> resumed =
            machinePauses.getOrDefault(older.candidate, List.of()).stream()
                .map(p -> p[1])
                .filter(c -> c - start <= TimeUnit.MILLISECONDS.toNanos(200))
                .max(Long::compare);
        boolean explained = resumed.isPresent() && end - resumed.get() <= excusedAfterResume;
        String what =
            older
                + " and "
                + newer
                + " both ran unpaused for "
                + ms(overlap)
                + " ms from "
                + at(start);
        if (explained) {
          long lateAccepts = older.accepts.stream().filter(t -> t - newer.first >= 0).count();
          stale.add(
              what
                  + " ("
                  + older.candidate
                  + " resumed with its machine and was stopped "
                  + ms(end - resumed.get())
                  + " ms later; accepted writes after "
                  + newer.candidate
                  + " started: "
                  + lateAccepts
                  + ", refused in all: "
                  + older.refusals
                  + ")");
        } else {
          worstOverlap = Math.max(worstOverlap, overlap);
          if (overlap > OVERLAP_TOLERANCE) {
            violations.add(what);
          }
        }
      }
    }
    return stale;
  }

  /** The intervals in which both ran and neither's command was paused. */
  private List<long[]> unpaused(WriterLog.Instance a, WriterLog.Instance b) {
    long from = Math.max(a.first, b.first);
    long to = Math.min(a.last, b.last);
    List<long[]> parts = new ArrayList<>();
    if (to - from <= 0) {
      return parts;
    }
    parts.add(new long[] {from, to});
    List<long[]> cuts = new ArrayList<>(commandPauses.getOrDefault(a.candidate, List.of()));
    cuts.addAll(commandPauses.getOrDefault(b.candidate, List.of()));
    for (long[] cut : cuts) {
      List<long[]> next = new ArrayList<>();
      for (long[] p : parts) {
        if (cut[1] - p[0] <= 0 || p[1] - cut[0] <= 0) {
          next.add(p);
          continue;
        }
        if (cut[0] - p[0] > 0) {
          next.add(new long[] {p[0], cut[0]});
        }
        if (p[1] - cut[1] > 0) {
          next.add(new long[] {cut[1], p[1]});
        }
      }
      parts = next;
    }
    parts.sort((x, y) -> Long.compare(x[0] - t0, y[0] - t0));
    return parts;
  }

  void report(String header, WriterLog w, List<String> stale, int restarts) {
    StringBuilder r = new StringBuilder(header);
    r.append("what happened:\n");
    narration.forEach(line -> r.append("  ").append(line).append('\n'));
    r.append("what was found:\n");
    r.append("  faults:");
    for (String kind :
        List.of(
            "kill",
            "term",
            "pause",
            "short pause",
            "jvm pause",
            "elect group pause",
            "command pause")) {
      r.append(' ')
          .append(faults.stream().filter(f -> f.kind().equals(kind)).count())
          .append(' ')
          .append(kind)
          .append(',');
    }
    r.append(' ').append(restarts).append(" restarts\n");
    r.append("  writes: ")
        .append(w.count("accept"))
        .append(" accepted, ")
        .append(w.count("refuse"))
        .append(" refused for a stale token; commands run: ")
        .append(w.instances.size())
        .append('\n');
    List<String> tokenProblems = w.tokenViolations();
    r.append("  tokens: ")
        .append(
            tokenProblems.isEmpty()
                ? "accepted tokens never went backwards and each belonged to one candidate"
                : tokenProblems)
        .append('\n');
    r.append("  overlap: longest unexcused overlap of two commands ")
        .append(ms(worstOverlap))
        .append(" ms (tolerance ")
        .append(ms(OVERLAP_TOLERANCE))
        .append(" ms); ")
        .append(
            stale.isEmpty()
                ? "no command resumed with its paused machine ran beside a newer one"
                : stale.size() + " resumed stale leader(s), stopped by their guard or elect:")
        .append('\n');
    stale.forEach(s -> r.append("    ").append(s).append('\n'));
    for (String kind : List.of("kill", "term", "pause", "jvm pause", "elect group pause")) {
      List<Long> took =
          faults.stream()
              .filter(f -> f.kind().equals(kind) && f.failover() >= 0)
              .map(Fault::failover)
              .sorted()
              .toList();
      if (!took.isEmpty()) {
        r.append("  next leader after ")
            .append(kind)
            .append(": median ")
            .append(ms(took.get(took.size() / 2)))
            .append(" ms, max ")
            .append(ms(took.get(took.size() - 1)))
            .append(" ms over ")
            .append(took.size())
            .append('\n');
      }
    }
    faults.stream()
        .filter(f -> f.failover() >= 0)
        .forEach(
            f ->
                r.append("    ")
                    .append(f.kind())
                    .append(" of ")
                    .append(f.candidate())
                    .append(f.servedStore() ? " (served the store)" : "")
                    .append(": ")
                    .append(ms(f.failover()))
                    .append(" ms (bound ")
                    .append(ms(f.bound()))
                    .append(" ms)\n"));
    r.append("  violations: ").append(violations.isEmpty() ? "none" : "").append('\n');
    violations.forEach(v -> r.append("    ").append(v).append('\n'));
    System.out.println(r);
  }
}
