package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on 127.0.0.1 (an ephemeral port) between one node and one server, which a test can
 * cut, blackhole or heal. It counts bytes each way and connections, for tests and benchmarks.
 *
 * <p>Plain blocking sockets on daemon threads: one to accept, two per connection. Closing the
 * proxy closes every connection and ends every thread.
 */
public final class FaultProxy implements FaultInjector, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(FaultProxy.class);
  private static final int CONNECT_TIMEOUT_MILLIS = 2_000;

  private enum Mode {
    OPEN,
    CUT,
    BLACKHOLE
  }

  private final InetSocketAddress upstream;
  private final ServerSocket listener;
  private final String name;
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
  private final AtomicLong bytesToServer = new AtomicLong();
  private final AtomicLong bytesToClient = new AtomicLong();
  private final AtomicLong connectionsAccepted = new AtomicLong();
  private final AtomicInteger threadCount = new AtomicInteger();
  private volatile Mode mode = Mode.OPEN;
  private volatile boolean closed;

  private FaultProxy(InetSocketAddress upstream) throws IOException {
    this.upstream = upstream;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.name = "fault-proxy-" + listener.getLocalPort();
    daemon(name + "-accept", this::acceptLoop).start();
  }

  /** Starts a proxy to {@code upstream}, which must be a loopback address. */
  public static FaultProxy start(InetSocketAddress upstream) {
    requireNonNull(upstream, "upstream");
    if (upstream.getAddress() == null || !upstream.getAddress().isLoopbackAddress()) {
      throw new IllegalArgumentException("upstream must be a loopback address, but was " + upstream);
    }
    try {
      return new FaultProxy(upstream);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on 127.0.0.1 for a proxy to " + upstream, e);
    }
  }

  /** Where clients connect: 127.0.0.1 and this proxy's port. */
  public InetSocketAddress address() {
    return new InetSocketAddress(listener.getInetAddress(), listener.getLocalPort());
  }

  public int port() {
    return listener.getLocalPort();
  }

  public InetSocketAddress upstream() {
    return upstream;
  }

  @Override
  public void cut() {
    mode = Mode.CUT;
    for (Connection c : List.copyOf(connections)) {
      c.close();
    }
    log.debug("{}: cut", name);
  }

  @Override
  public void blackhole() {
    mode = Mode.BLACKHOLE;
    log.debug("{}: blackholed", name);
  }

  @Override
  public void heal() {
    mode = Mode.OPEN;
    for (Connection c : List.copyOf(connections)) {
      if (c.torn) {
        c.close();
      }
    }
    log.debug("{}: healed", name);
  }

  @Override
  public int openConnections() {
    return connections.size();
  }

  /** Bytes forwarded from clients to the server since the proxy started. */
  public long bytesToServer() {
    return bytesToServer.get();
  }

  /** Bytes forwarded from the server to clients since the proxy started. */
  public long bytesToClient() {
    return bytesToClient.get();
  }

  /** Connections accepted since the proxy started, including those refused while cut. */
  public long connectionsAccepted() {
    return connectionsAccepted.get();
  }

  @Override
  public void close() {
    closed = true;
    closeQuietly(listener);
    for (Connection c : List.copyOf(connections)) {
      c.close();
    }
  }

  @Override
  public String toString() {
    return name + " -> " + upstream + " (" + mode + ", " + connections.size() + " open)";
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        if (!closed) {
          log.warn("{}: accept failed; the proxy stops", name, e);
        }
        return;
      }
      connectionsAccepted.incrementAndGet();
      Mode now = mode;
      if (now == Mode.CUT || closed) {
        closeQuietly(client);
        continue;
      }
      Connection c = new Connection(client);
      connections.add(c);
      if (now == Mode.BLACKHOLE) {
        // Accepted and read, never answered, never forwarded: a partition as the client sees it.
        c.torn = true;
        daemon(name + "-drop-" + threadCount.incrementAndGet(), () -> c.pump(client, null, null)).start();
        continue;
      }
      daemon(name + "-open-" + threadCount.incrementAndGet(), () -> c.openUpstream()).start();
    }
  }

  private final class Connection {
    private final Socket client;
    private volatile Socket server;
    /** Bytes were dropped or never had a server: the stream cannot be resumed after a heal. */
    private volatile boolean torn;

    Connection(Socket client) {
      this.client = client;
    }

    void openUpstream() {
      Socket s = new Socket();
      try {
        s.connect(upstream, CONNECT_TIMEOUT_MILLIS);
        s.setTcpNoDelay(true);
        client.setTcpNoDelay(true);
      } catch (IOException e) {
        // The server is down: the client sees its connection closed, as it would be refused.
        closeQuietly(s);
        close();
        return;
      }
      server = s;
      if (mode == Mode.CUT || closed) {
        close();
        return;
      }
      int n = threadCount.incrementAndGet();
      daemon(name + "-up-" + n, () -> pump(client, s, bytesToServer)).start();
      pump(s, client, bytesToClient);
    }

    /** Copies {@code from} to {@code to} while open; drops what it reads while blackholed. */
    void pump(Socket from, Socket to, AtomicLong counter) {
      byte[] buffer = new byte[16 * 1024];
      try {
        InputStream in = from.getInputStream();
        OutputStream out = to == null ? null : to.getOutputStream();
        while (true) {
          int n = in.read(buffer);
          if (n < 0) {
            break;
          }
          if (out == null || mode != Mode.OPEN) {
            torn = true;
            continue;
          }
          // Counted before it is written, so a reader that saw the bytes also sees the count.
          counter.addAndGet(n);
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (SocketException e) {
        // Closed by cut(), heal(), close() or the other side: the normal way a connection ends.
      } catch (IOException e) {
        log.debug("{}: connection ended: {}", name, e.toString());
      } finally {
        close();
      }
    }

    void close() {
      connections.remove(this);
      closeQuietly(client);
      Socket s = server;
      if (s != null) {
        closeQuietly(s);
      }
    }
  }

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    return t;
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      // Closing a socket that is already closed or broken: nothing left to do.
    }
  }
}
