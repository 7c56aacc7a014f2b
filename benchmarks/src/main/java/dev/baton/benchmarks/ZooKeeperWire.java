package dev.baton.benchmarks;

import dev.baton.conformance.FaultProxy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * What one ZooKeeper client and its server said to each other, read off the bytes its node's proxy
 * forwards: each request with its opcode, each answer, each watch event, at the time the proxy read
 * it. Pings are left out. It needs nothing from the library on the client, so Baton and Curator are
 * taken apart the same way, on the same clock as the {@link Timeline}.
 */
final class ZooKeeperWire {

  enum Kind {
    REQUEST,
    ANSWER,
    WATCH_EVENT
  }

  /** One frame: its kind, and for a request or its answer the request's opcode (-1 unknown). */
  record Message(long nanos, Kind kind, int opcode) {
    /** create, delete, setData, multi, create2, createContainer, deleteContainer, createTTL. */
    boolean isWrite() {
      return kind == Kind.REQUEST
          && (opcode == 1
              || opcode == 2
              || opcode == 5
              || opcode == 14
              || opcode == 15
              || opcode == 19
              || opcode == 20
              || opcode == 21);
    }
  }

  /**
   * One handover, from the leaving leader's {@code close()} to the next leader's onElected, cut
   * where the wire shows it, in ms: the leader's release (its first write) leaves the leader, the
   * server's watch event reaches the next in line, the next sends its first request, the last
   * answer before onElected reaches it.
   */
  record Split(
      double toRelease,
      double toWatchEvent,
      double toFirstRequest,
      double toLastAnswer,
      double toElected,
      String requests) {}

  private static final int XID_WATCH_EVENT = -1;
  private static final int XID_PING = -2;

  /** Far above a benchmark's messages; a bound so that a runaway client cannot fill the heap. */
  private static final int MAX_MESSAGES = 500_000;

  private final ConcurrentLinkedQueue<Message> messages = new ConcurrentLinkedQueue<>();
  private final AtomicInteger count = new AtomicInteger();

  /** A wire that records every connection {@code proxy} accepts from now on. */
  static ZooKeeperWire tapping(FaultProxy proxy) {
    ZooKeeperWire wire = new ZooKeeperWire();
    proxy.tap(wire::connection);
    return wire;
  }

  private FaultProxy.Tap connection() {
    Map<Integer, Integer> opcodeOfXid = new ConcurrentHashMap<>();
    Frames toServer = new Frames(8);
    Frames toClient = new Frames(16);
    return (up, nanos, bytes, offset, length) -> {
      if (up) {
        toServer.feed(nanos, bytes, offset, length, (at, head) -> request(at, head, opcodeOfXid));
      } else {
        toClient.feed(nanos, bytes, offset, length, (at, head) -> answer(at, head, opcodeOfXid));
      }
    };
  }

  private void request(long nanos, byte[] head, Map<Integer, Integer> opcodeOfXid) {
    int xid = intAt(head, 0);
    if (xid == XID_PING) {
      return;
    }
    int opcode = intAt(head, 4);
    opcodeOfXid.put(xid, opcode);
    add(new Message(nanos, Kind.REQUEST, opcode));
  }

  private void answer(long nanos, byte[] head, Map<Integer, Integer> opcodeOfXid) {
    int xid = intAt(head, 0);
    if (xid == XID_PING) {
      return;
    }
    if (xid == XID_WATCH_EVENT) {
      add(new Message(nanos, Kind.WATCH_EVENT, -1));
      return;
    }
    Integer opcode = opcodeOfXid.remove(xid);
    add(new Message(nanos, Kind.ANSWER, opcode == null ? -1 : opcode));
  }

  private void add(Message m) {
    if (count.incrementAndGet() <= MAX_MESSAGES) {
      messages.add(m);
    }
  }

  /** Messages read from {@code from} to {@code to} (inclusive), in time order. */
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
   * next}'s onElected at {@code electedNanos}; empty where the wire does not show each step in
   * order.
   */
  static Optional<Split> handover(
      ZooKeeperWire leaver, ZooKeeperWire next, long closeNanos, long electedNanos) {
    Long release =
        leaver.between(closeNanos, electedNanos).stream()
            .filter(Message::isWrite)
            .map(Message::nanos)
            .findFirst()
            .orElse(null);
    if (release == null) {
      return Optional.empty();
    }
    Long event = null;
    Long firstRequest = null;
    Long lastAnswer = null;
    List<String> requests = new ArrayList<>();
    for (Message m : next.between(release, electedNanos)) {
      if (event == null) {
        if (m.kind() == Kind.WATCH_EVENT) {
          event = m.nanos();
        }
      } else if (m.kind() == Kind.REQUEST) {
        firstRequest = firstRequest == null ? m.nanos() : firstRequest;
        requests.add(name(m.opcode()));
      } else if (m.kind() == Kind.ANSWER && firstRequest != null) {
        lastAnswer = m.nanos();
      }
    }
    if (event == null || firstRequest == null || lastAnswer == null) {
      return Optional.empty();
    }
    return Optional.of(
        new Split(
            ms(release - closeNanos),
            ms(event - release),
            ms(firstRequest - event),
            ms(lastAnswer - firstRequest),
            ms(electedNanos - lastAnswer),
            String.join(" + ", requests)));
  }

  /** The median of each step over {@code rounds}, as a line for the console. */
  static String medians(List<Split> rounds) {
    return String.format(
        "%d rounds, medians in ms: close() → release %s, → watch event %s, → first request %s,"
            + " → last answer %s (mostly %s), → onElected %s",
        rounds.size(),
        Stats.fixed(median(rounds, Split::toRelease), 2),
        Stats.fixed(median(rounds, Split::toWatchEvent), 2),
        Stats.fixed(median(rounds, Split::toFirstRequest), 2),
        Stats.fixed(median(rounds, Split::toLastAnswer), 2),
        mostly(rounds),
        Stats.fixed(median(rounds, Split::toElected), 2));
  }

  static double median(List<Split> rounds, ToDoubleFunction<Split> step) {
    return Stats.of(rounds.stream().map(step::applyAsDouble).toList()).p50();
  }

  /** The requests most rounds sent between the watch event and the last answer. */
  static String mostly(List<Split> rounds) {
    return rounds.stream()
        .collect(Collectors.groupingBy(Split::requests, Collectors.counting()))
        .entrySet()
        .stream()
        .max(Map.Entry.comparingByValue())
        .map(Map.Entry::getKey)
        .orElse("–");
  }

  /** The name ZooKeeper's protocol gives an opcode (ZooDefs.OpCode). */
  static String name(int opcode) {
    return switch (opcode) {
      case 1 -> "create";
      case 2 -> "delete";
      case 3 -> "exists";
      case 4 -> "getData";
      case 5 -> "setData";
      case 8 -> "getChildren";
      case 9 -> "sync";
      case 12 -> "getChildren2";
      case 13 -> "check";
      case 14 -> "multi";
      case 15 -> "create2";
      case 18 -> "removeWatches";
      case 22 -> "multiRead";
      case 101 -> "setWatches";
      case 105 -> "setWatches2";
      case 106 -> "addWatch";
      default -> "op " + opcode;
    };
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }

  private static int intAt(byte[] b, int at) {
    return (b[at] & 0xff) << 24
        | (b[at + 1] & 0xff) << 16
        | (b[at + 2] & 0xff) << 8
        | b[at + 3] & 0xff;
  }

  /** Called with the time a frame's first byte was read and the first bytes after its length. */
  @FunctionalInterface
  interface FrameHead {
    void read(long nanos, byte[] head);
  }

  /**
   * Cuts one direction of a connection into frames (a 4-byte length, then the body) and hands on
   * the first {@code headLength} bytes of each body. The first frame each way is the session's
   * connect request or answer, which has no header, and is passed over.
   */
  static final class Frames {
    private final int headLength;
    private final byte[] length = new byte[4];
    private final byte[] head;
    private int lengthFill;
    private int headFill;
    private int wanted;
    private int rest;
    private long startedAt;
    private boolean connect = true;

    Frames(int headLength) {
      this.headLength = headLength;
      this.head = new byte[headLength];
    }

    void feed(long nanos, byte[] bytes, int offset, int count, FrameHead to) {
      int i = offset;
      int end = offset + count;
      while (i < end) {
        if (lengthFill < 4) {
          if (lengthFill == 0) {
            startedAt = nanos;
          }
          length[lengthFill++] = bytes[i++];
          if (lengthFill == 4) {
            int body = intAt(length, 0);
            wanted = connect ? 0 : Math.min(body, headLength);
            rest = body - wanted;
            headFill = 0;
            if (wanted == 0) {
              headDone(to);
            }
          }
        } else if (headFill < wanted) {
          int n = Math.min(wanted - headFill, end - i);
          System.arraycopy(bytes, i, head, headFill, n);
          headFill += n;
          i += n;
          if (headFill == wanted) {
            headDone(to);
          }
        } else {
          int n = Math.min(rest, end - i);
          rest -= n;
          i += n;
          if (rest == 0) {
            lengthFill = 0;
          }
        }
      }
    }

    private void headDone(FrameHead to) {
      if (!connect && wanted == headLength) {
        to.read(startedAt, head);
      }
      connect = false;
      if (rest == 0) {
        lengthFill = 0;
      }
    }
  }
}
