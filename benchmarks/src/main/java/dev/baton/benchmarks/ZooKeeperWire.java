package dev.baton.benchmarks;

import dev.baton.conformance.FaultProxy;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads ZooKeeper's protocol off the bytes a node's proxy forwards, into a {@link WireLog}: each
 * request with its opcode, each answer, each watch event, at the time the proxy read it. Pings are
 * left out.
 */
final class ZooKeeperWire {

  private static final int XID_WATCH_EVENT = -1;
  private static final int XID_PING = -2;

  private final WireLog log = new WireLog();

  private ZooKeeperWire() {}

  /** A log of every connection {@code proxy} accepts from now on. */
  static WireLog tapping(FaultProxy proxy) {
    ZooKeeperWire wire = new ZooKeeperWire();
    proxy.tap(wire::connection);
    return wire.log;
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
    log.add(nanos, WireLog.Kind.REQUEST, name(opcode), isWrite(opcode));
  }

  private void answer(long nanos, byte[] head, Map<Integer, Integer> opcodeOfXid) {
    int xid = intAt(head, 0);
    if (xid == XID_PING) {
      return;
    }
    if (xid == XID_WATCH_EVENT) {
      log.add(nanos, WireLog.Kind.EVENT, "watch event", false);
      return;
    }
    Integer opcode = opcodeOfXid.remove(xid);
    log.add(nanos, WireLog.Kind.ANSWER, opcode == null ? "?" : name(opcode), false);
  }

  /** create, delete, setData, multi, create2, createContainer, deleteContainer, createTTL. */
  static boolean isWrite(int opcode) {
    return opcode == 1
        || opcode == 2
        || opcode == 5
        || opcode == 14
        || opcode == 15
        || opcode == 19
        || opcode == 20
        || opcode == 21;
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
