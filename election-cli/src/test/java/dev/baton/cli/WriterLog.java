package dev.baton.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The fenced writers' shared log, read back: what was accepted, refused, and when each command ran.
 */
final class WriterLog {

  record Entry(String kind, long token, String candidate, long pid, long nanos) {}

  /** One run of a command: one term's writer process, from its first line to its last. */
  static final class Instance {
    final long token;
    final String candidate;
    final long pid;
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    final List<Long> accepts = new ArrayList<>();
    int refusals;
    boolean stopped;

    Instance(long token, String candidate, long pid) {
      this.token = token;
      this.candidate = candidate;
      this.pid = pid;
    }

    @Override
    public String toString() {
      return candidate + " token " + token + " pid " + pid;
    }
  }

  final List<Entry> entries;
  final Map<String, Instance> instances = new LinkedHashMap<>();

  private WriterLog(List<Entry> entries) {
    this.entries = entries;
    for (Entry e : entries) {
      Instance i =
          instances.computeIfAbsent(
              e.token() + "/" + e.pid(), k -> new Instance(e.token(), e.candidate(), e.pid()));
      i.first = Math.min(i.first, e.nanos());
      i.last = Math.max(i.last, e.nanos());
      switch (e.kind()) {
        case "accept":
          i.accepts.add(e.nanos());
          break;
        case "refuse":
          i.refusals++;
          break;
        case "stop":
          i.stopped = true;
          break;
        default:
          break;
      }
    }
  }

  static WriterLog read(Path file) {
    List<Entry> entries = new ArrayList<>();
    try {
      if (Files.exists(file)) {
        for (String line : Files.readAllLines(file)) {
          String[] f = line.trim().split(" ");
          if (f.length >= 5) {
            entries.add(
                new Entry(
                    f[0], Long.parseLong(f[1]), f[2], Long.parseLong(f[3]), Long.parseLong(f[4])));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new WriterLog(entries);
  }

  boolean accepted(long token) {
    return entries.stream().anyMatch(e -> e.kind().equals("accept") && e.token() == token);
  }

  /** When the first write with {@code token} was accepted at or after {@code nanos}. */
  Optional<Long> acceptedAfter(long token, long nanos) {
    return entries.stream()
        .filter(e -> e.kind().equals("accept") && e.token() == token && e.nanos() - nanos >= 0)
        .map(Entry::nanos)
        .findFirst();
  }

  long count(String kind) {
    return entries.stream().filter(e -> e.kind().equals(kind)).count();
  }

  /**
   * Problems with the order of accepted tokens: they must never go backwards, and a token belongs
   * to one candidate.
   */
  List<String> tokenViolations() {
    List<String> problems = new ArrayList<>();
    long highest = 0;
    Map<Long, String> owner = new HashMap<>();
    for (Entry e : entries) {
      if (!e.kind().equals("accept")) {
        continue;
      }
      if (e.token() < highest) {
        problems.add(
            "token " + e.token() + " of " + e.candidate() + " was accepted after token " + highest);
      }
      highest = Math.max(highest, e.token());
      String before = owner.putIfAbsent(e.token(), e.candidate());
      if (before != null && !before.equals(e.candidate())) {
        problems.add("token " + e.token() + " was used by " + before + " and by " + e.candidate());
      }
    }
    return problems;
  }
}
