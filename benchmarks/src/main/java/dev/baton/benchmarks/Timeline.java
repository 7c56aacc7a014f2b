package dev.baton.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * When each node was told it leads ({@code onElected}, {@code isLeader}, {@code onGranted}...) and
 * when it was told it no longer does, on this JVM's monotonic clock. Callbacks of every library
 * under test write here; the measurements wait on it.
 */
final class Timeline {

  enum Kind {
    ELECTED,
    REVOKED
  }

  record Event(Kind kind, String node, long nanos) {}

  private final List<Event> events = new ArrayList<>();

  void elected(String node) {
    add(new Event(Kind.ELECTED, node, System.nanoTime()));
  }

  void revoked(String node) {
    add(new Event(Kind.REVOKED, node, System.nanoTime()));
  }

  private synchronized void add(Event e) {
    events.add(e);
    notifyAll();
  }

  /**
   * The first {@code ELECTED} of a node accepted by {@code node} at or after {@code afterNanos},
   * waiting at most {@code timeout}.
   */
  synchronized Optional<Event> awaitElected(
      Predicate<String> node, long afterNanos, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    int from = 0;
    while (true) {
      for (int i = from; i < events.size(); i++) {
        Event e = events.get(i);
        if (e.kind() == Kind.ELECTED && e.nanos() - afterNanos >= 0 && node.test(e.node())) {
          return Optional.of(e);
        }
      }
      from = events.size();
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return Optional.empty();
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }

  /**
   * The first {@code REVOKED} of {@code node} at or after {@code afterNanos}, waiting at most
   * {@code timeout}.
   */
  synchronized Optional<Event> awaitRevoked(String node, long afterNanos, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      for (Event e : events) {
        if (e.kind() == Kind.REVOKED && e.node().equals(node) && e.nanos() - afterNanos >= 0) {
          return Optional.of(e);
        }
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return Optional.empty();
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }

  /** How many times {@code node} was told it lost leadership since {@code afterNanos}. */
  synchronized int revocations(String node, long afterNanos) {
    int n = 0;
    for (Event e : events) {
      if (e.kind() == Kind.REVOKED && e.node().equals(node) && e.nanos() - afterNanos >= 0) {
        n++;
      }
    }
    return n;
  }
}
