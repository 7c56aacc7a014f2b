package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
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
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on 127.0.0.1 (an ephemeral port) between one node and one server, which a test can
 * cut, blackhole, stop reading from (either way) or heal. It counts bytes each way and connections,
 * for tests and benchmarks.
 *
 * <p>Plain blocking sockets on daemon threads: one to accept, two per connection. Closing the proxy
 * closes every connection and ends every thread.
 */
public final class FaultProxy implements FaultInjector, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(FaultProxy.class);
  private static final int CONNECT_TIMEOUT_MILLIS = 2_000;

  private enum Mode {
    OPEN,
    CUT,
    BLACKHOLE,
    /**
     * Nothing is read from clients: their send buffers fill, as behind a link that drops silently.
     */
    REQUESTS_UNREAD,
    /**
     * Requests reach the server, whose answers are not read: it acts on requests whose answers are
     * late.
     */
    ANSWERS_UNREAD
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
  private volatile Supplier<? extends Tap> taps = () -> null;

  /** Notified when reading may resume. */
  private final Object unread = new Object();

  private FaultProxy(InetSocketAddress upstream, int receiveBufferBytes) throws IOException {
    this.upstream = upstream;
    this.listener = new ServerSocket();
    if (receiveBufferBytes > 0) {
      // Set before bind, so that accepted sockets start with it and advertise a small window.
      listener.setReceiveBufferSize(receiveBufferBytes);
    }
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    this.name = "fault-proxy-" + listener.getLocalPort();
    daemon(name + "-accept", this::acceptLoop).start();
  }

  /**
   * Sees the bytes of one connection as the proxy forwards them, for a benchmark that takes a
   * protocol apart on the wire.
   */
  @FunctionalInterface
  public interface Tap {
    /**
     * {@code length} bytes from {@code offset} of {@code bytes}, read at {@code nanoTime} ({@link
     * System#nanoTime()}) and about to be forwarded to the server ({@code toServer}) or the client.
     * Each direction calls from a thread of its own, in the order the bytes came; the array is
     * reused after the call returns. It must be quick: the bytes wait for it.
     */
    void forwarded(boolean toServer, long nanoTime, byte[] bytes, int offset, int length);
  }

  /**
   * Gives every connection accepted from now on a tap of its own from {@code perConnection}; one
   * that returns null leaves its connection untapped. Set it before the client connects.
   */
  public void tap(Supplier<? extends Tap> perConnection) {
    taps = requireNonNull(perConnection, "perConnection");
  }

  /** Starts a proxy to {@code upstream}, which must be a loopback address. */
  public static FaultProxy start(InetSocketAddress upstream) {
    return start(upstream, 0);
  }

  /**
   * Starts a proxy whose connections from clients have a receive buffer of about {@code
   * receiveBufferBytes} (the kernel may round it), as across a link whose window has not grown:
   * with {@link #stopReadingRequests()} a client then blocks in a write of far fewer bytes than
   * loopback's large default buffers absorb (megabytes). 0 keeps the system's default.
   */
  public static FaultProxy start(InetSocketAddress upstream, int receiveBufferBytes) {
    requireNonNull(upstream, "upstream");
    if (upstream.getAddress() == null || !upstream.getAddress().isLoopbackAddress()) {
      throw new IllegalArgumentException(
          "upstream must be a loopback address, but was " + upstream);
    }
    try {
      return new FaultProxy(upstream, receiveBufferBytes);
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

  /**
   * Stops reading what clients send until {@link #heal()}: unlike {@link #blackhole()}, the bytes
   * stay in the client's send buffer and the proxy's receive buffer, so once both are full a client
   * blocks in its socket write, where Java has no timeout. Answers already on their way still reach
   * the client. Held bytes flow on after the heal.
   */
  public void stopReadingRequests() {
    mode = Mode.REQUESTS_UNREAD;
    log.debug("{}: not reading requests", name);
  }

  /**
   * Forwards requests but stops reading the server's answers until {@link #heal()}: the server
   * applies a request whose answer the client does not get in time, as when a response is delayed.
   * Held answers flow on after the heal, if the client still listens.
   */
  public void stopReadingAnswers() {
    mode = Mode.ANSWERS_UNREAD;
    log.debug("{}: not reading answers", name);
  }

  @Override
  public void heal() {
    mode = Mode.OPEN;
    synchronized (unread) {
      unread.notifyAll();
    }
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
    synchronized (unread) {
      unread.notifyAll();
    }
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
      Connection c = new Connection(client, taps.get());
      connections.add(c);
      if (now == Mode.BLACKHOLE) {
        // Accepted and read, never answered, never forwarded: a partition as the client sees it.
        c.torn = true;
        daemon(name + "-drop-" + threadCount.incrementAndGet(), () -> c.pump(client, null, null))
            .start();
        continue;
      }
      daemon(name + "-open-" + threadCount.incrementAndGet(), () -> c.openUpstream()).start();
    }
  }

  private final class Connection {
    private final Socket client;
    private final Tap tap;
    private volatile Socket server;

    /** Bytes were dropped or never had a server: the stream cannot be resumed after a heal. */
    private volatile boolean torn;

    Connection(Socket client, Tap tap) {
      this.client = client;
      this.tap = tap;
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
        boolean toServer = to == null || counter == bytesToServer;
        while (true) {
          awaitReading(toServer);
          int n = in.read(buffer);
          if (n < 0) {
            break;
          }
          long readAt = System.nanoTime();
          // Bytes read just before the mode changed are held too, not forwarded.
          awaitReading(toServer);
          Mode now = mode;
          if (out == null || now == Mode.BLACKHOLE || now == Mode.CUT) {
            torn = true;
            continue;
          }
          // Counted before it is written, so a reader that saw the bytes also sees the count.
          counter.addAndGet(n);
          if (tap != null) {
            tap.forwarded(toServer, readAt, buffer, 0, n);
          }
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

    /** Waits while this direction is not to be read; returns at once in every other mode. */
    private void awaitReading(boolean toServer) throws InterruptedIOException {
      synchronized (unread) {
        while (!closed && mode == (toServer ? Mode.REQUESTS_UNREAD : Mode.ANSWERS_UNREAD)) {
          try {
            unread.wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while not reading");
          }
        }
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
