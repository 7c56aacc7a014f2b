package dev.baton.benchmarks;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * What one node and its server said to each other, message by message, each at the time it was
 * seen: {@link ZooKeeperWire} reads it off the bytes the node's proxy forwards, {@link
 * GrpcRequestCounter} off the messages a jetcd client hands to gRPC and gets back. Either way the
 * library on the client is not touched, so Baton and its peer are taken apart alike, on the clock
 * of the {@link Timeline}.
 */
final class WireLog {

  enum Kind {
    REQUEST,
    ANSWER,
    /**
     * The server tells the client of a change: a watch event, or the answer to a call that waits
     * for one (etcd's {@code Election/Campaign}).
     */
    EVENT
  }

  /** One message: for a request or its answer, the request's name; whether the request writes. */
  record Message(long nanos, Kind kind, String name, boolean write) {}

  /**
   * One handover, from the leaving leader's {@code close()} to the next leader's onElected, cut
   * where the messages show it, in ms: (1) the leaver's release (its first write) goes out, (2) the
   * next is told, (3) it sends its first request after that, (4) the last answer before onElected
   * reaches it, (5) onElected. A next leader that sends nothing after it is told spends nothing in
   * (3) and (4).
   */
  record Split(
      double toRelease,
      double toTold,
      double toFirstRequest,
      double toLastAnswer,
      double toElected,
      String requests) {}

  /** Far above a benchmark's messages; a bound so that a runaway client cannot fill the heap. */
  private static final int MAX_MESSAGES = 500_000;

  private final ConcurrentLinkedQueue<Message> messages = new ConcurrentLinkedQueue<>();
  private final AtomicInteger count = new AtomicInteger();

  void add(long nanos, Kind kind, String name, boolean write) {
    if (count.incrementAndGet() <= MAX_MESSAGES) {
      messages.add(new Message(nanos, kind, name, write));
    }
  }

  /** Messages seen from {@code from} to {@code to} (inclusive), in time order. */
  List<Message> between(long from, long to) {
    List<Message> in = new ArrayList<>();
    for (Message m : messages) {
      if (m.nanos() >= from && m.nanos() <= to) {
        in.add(m);
      }
    }
    in.sort(Comparator.comparingLong(Message::nanos));
    return in;
  }

  /**
   * Takes apart one handover from {@code leaver}'s {@code close()} at {@code closeNanos} to {@code
   * next}'s onElected at {@code electedNanos}; empty where the messages do not show the release and
   * the next being told, in that order.
   */
  static Optional<Split> handover(
      WireLog leaver, WireLog next, long closeNanos, long electedNanos) {
    Long release =
        leaver.between(closeNanos, electedNanos).stream()
            .filter(m -> m.kind() == Kind.REQUEST && m.write())
            .map(Message::nanos)
            .findFirst()
            .orElse(null);
    if (release == null) {
      return Optional.empty();
    }
    Long told = null;
    Long firstRequest = null;
    Long lastAnswer = null;
    List<String> requests = new ArrayList<>();
    for (Message m : next.between(release, electedNanos)) {
      if (told == null) {
        if (m.kind() == Kind.EVENT) {
          told = m.nanos();
        }
      } else if (m.kind() == Kind.REQUEST) {
        firstRequest = firstRequest == null ? m.nanos() : firstRequest;
        requests.add(m.name());
      } else if (m.kind() == Kind.ANSWER && firstRequest != null) {
        lastAnswer = m.nanos();
      }
    }
    if (told == null) {
      return Optional.empty();
    }
    if (firstRequest == null || lastAnswer == null) {
      firstRequest = told;
      lastAnswer = told;
      requests.clear();
    }
    return Optional.of(
        new Split(
            ms(release - closeNanos),
            ms(told - release),
            ms(firstRequest - told),
            ms(lastAnswer - firstRequest),
            ms(electedNanos - lastAnswer),
            requests.isEmpty() ? "none" : String.join(" + ", requests)));
  }

  /** The median of each step over {@code rounds}, as a line for the console. */
  static String medians(List<Split> rounds) {
    double[] m = stepMedians(rounds);
    return String.format(
        "%d rounds, medians in ms: close() → release %s, → told %s, → first request %s,"
            + " → last answer %s (mostly %s), → onElected %s",
        rounds.size(),
        Stats.fixed(m[0], 2),
        Stats.fixed(m[1], 2),
        Stats.fixed(m[2], 2),
        Stats.fixed(m[3], 2),
        mostly(rounds),
        Stats.fixed(m[4], 2));
  }

  /** The median of each of the five steps over {@code rounds}, in the order of {@link Split}. */
  static double[] stepMedians(List<Split> rounds) {
    List<ToDoubleFunction<Split>> steps =
        List.of(
            Split::toRelease,
            Split::toTold,
            Split::toFirstRequest,
            Split::toLastAnswer,
            Split::toElected);
    double[] medians = new double[steps.size()];
    for (int i = 0; i < medians.length; i++) {
      ToDoubleFunction<Split> step = steps.get(i);
      medians[i] = Stats.of(rounds.stream().map(step::applyAsDouble).toList()).p50();
    }
    return medians;
  }

  /** The requests most rounds sent between being told and the last answer. */
  static String mostly(List<Split> rounds) {
    return rounds.stream()
        .collect(Collectors.groupingBy(Split::requests, Collectors.counting()))
        .entrySet()
        .stream()
        .max(Map.Entry.comparingByValue())
        .map(Map.Entry::getKey)
        .orElse("–");
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
