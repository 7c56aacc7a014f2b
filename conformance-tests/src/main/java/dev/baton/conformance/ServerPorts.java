package dev.baton.conformance;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Listening ports for test servers that are started, killed and started again on the same ports.
 *
 * <p>A port the kernel hands out for {@code bind(0)} comes from its ephemeral range, the range it
 * also takes the local end of every outgoing connection from. Between a server's stop and its
 * restart (or between picking a port and the first bind) a client's or a proxy's connection may
 * take that port, and the server then cannot bind it: an etcd member exits, a ZooKeeper member
 * leaves the quorum for good. Ports below the range are never taken that way.
 */
public final class ServerPorts {

  private static final int LOWEST = 10_000;
  private static final int TRIES = 200;

  /** Handed out in this JVM and never handed out again, so two servers never share a port. */
  private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

  private ServerPorts() {}

  /** A loopback port, free now, below the ephemeral range, not handed out before in this JVM. */
  public static int belowEphemeralRange() {
    int below = ephemeralRangeStart();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < TRIES; attempt++) {
      int port = random.nextInt(LOWEST, below);
      if (!HANDED_OUT.add(port)) {
        continue;
      }
      try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return socket.getLocalPort();
      } catch (IOException e) {
        // Some other process listens there; it stays handed out so that no later try picks it.
      }
    }
    throw new IllegalStateException(
        "no free loopback port between " + LOWEST + " and " + below + " after " + TRIES + " tries");
  }

  private static int ephemeralRangeStart() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      return Math.max(LOWEST + 1_000, Integer.parseInt(range.split("\\s+")[0]));
    } catch (IOException | RuntimeException e) {
      // Not Linux, or the file is unreadable: Linux's default start is the best guess left.
      return 32_768;
    }
  }
}
