package dev.baton.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One etcd member on loopback, run from the {@code etcd} binary (Debian's {@code etcd-server}
 * package; {@code scripts/install-etcd} installs it), with its own ports and temporary data
 * directory. Stopped by its PID, also when the JVM exits without closing it.
 */
final class EtcdServer implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

  private final Process process;
  private final Path dir;
  private final int clientPort;
  private final Thread stopOnExit;

  private EtcdServer(Process process, Path dir, int clientPort) {
    this.process = process;
    this.dir = dir;
    this.clientPort = clientPort;
    this.stopOnExit = new Thread(this::stop, "etcd-stop-" + process.pid());
    Runtime.getRuntime().addShutdownHook(stopOnExit);
  }

  /** The etcd binary: {@code etcd} on the PATH, else {@code /usr/bin/etcd}. */
  static Optional<Path> binary() {
    for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (!d.isEmpty() && Files.isExecutable(Path.of(d, "etcd"))) {
        return Optional.of(Path.of(d, "etcd"));
      }
    }
    Path usrBin = Path.of("/usr/bin/etcd");
    return Files.isExecutable(usrBin) ? Optional.of(usrBin) : Optional.empty();
  }

  static EtcdServer start() {
    Path etcd = binary().orElseThrow(() -> new IllegalStateException("etcd is not installed; run scripts/install-etcd"));
    IllegalStateException failure = null;
    // A free port found by binding and closing may be taken by someone else before etcd binds it.
    for (int attempt = 1; attempt <= 3; attempt++) {
      try {
        return launch(etcd);
      } catch (IllegalStateException e) {
        failure = e;
      }
    }
    throw failure;
  }

  private static EtcdServer launch(Path etcd) {
    Path dir;
    try {
      dir = Files.createTempDirectory("baton-bench-etcd-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int client = freePort();
    int peer = freePort();
    String clientUrl = "http://127.0.0.1:" + client;
    String peerUrl = "http://127.0.0.1:" + peer;
    List<String> command = List.of(
        etcd.toString(),
        "--name", "bench",
        "--data-dir", dir.resolve("data").toString(),
        "--listen-client-urls", clientUrl,
        "--advertise-client-urls", clientUrl,
        "--listen-peer-urls", peerUrl,
        "--initial-advertise-peer-urls", peerUrl,
        "--initial-cluster", "bench=" + peerUrl,
        "--initial-cluster-state", "new");
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("etcd.log").toFile()).start();
    } catch (IOException e) {
      Files2.deleteTree(dir);
      throw new UncheckedIOException("cannot run " + etcd, e);
    }
    EtcdServer server = new EtcdServer(p, dir, client);
    if (!server.awaitHealthy()) {
      String log = server.logTail();
      server.close();
      throw new IllegalStateException("etcd did not become healthy within " + START_TIMEOUT.toSeconds() + " s; its log ends: " + log);
    }
    return server;
  }

  private boolean awaitHealthy() {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + clientPort + "/health")).timeout(Duration.ofSeconds(1)).build();
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() - deadline < 0 && process.isAlive()) {
      try {
        HttpResponse<String> r = http.send(health, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200 && r.body().contains("true")) {
          return true;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
      Pause.millis(100);
    }
    return false;
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(dir.resolve("etcd.log"));
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /**
   * etcd's own histogram of its write-ahead log fsyncs so far: every write (a put, a transaction, a
   * lease grant or revoke) waits for one before it is answered, so its time is the floor of a
   * write's latency on this machine, whatever the client does.
   */
  WalFsyncs walFsyncs() {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    HttpRequest metrics = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + clientPort + "/metrics")).timeout(Duration.ofSeconds(2)).build();
    try {
      return WalFsyncs.parse(http.send(metrics, HttpResponse.BodyHandlers.ofString()).body());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read etcd's metrics", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted reading etcd's metrics", e);
    }
  }

  /** Fsync count, total seconds, and cumulative counts per bucket bound (seconds), as etcd reports them. */
  record WalFsyncs(long count, double seconds, java.util.NavigableMap<Double, Long> cumulative) {
    private static final String NAME = "etcd_disk_wal_fsync_duration_seconds";

    static WalFsyncs parse(String text) {
      long count = 0;
      double seconds = 0;
      java.util.NavigableMap<Double, Long> buckets = new java.util.TreeMap<>();
      for (String line : text.split("\n")) {
        if (line.startsWith(NAME + "_count ")) {
          count = (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
        } else if (line.startsWith(NAME + "_sum ")) {
          seconds = Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
        } else if (line.startsWith(NAME + "_bucket{le=\"") && !line.contains("+Inf")) {
          int open = line.indexOf('"') + 1;
          double le = Double.parseDouble(line.substring(open, line.indexOf('"', open)));
          buckets.put(le, (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim()));
        }
      }
      return new WalFsyncs(count, seconds, buckets);
    }

    /** The fsyncs after {@code earlier}. */
    WalFsyncs since(WalFsyncs earlier) {
      java.util.NavigableMap<Double, Long> diff = new java.util.TreeMap<>();
      cumulative.forEach((le, n) -> diff.put(le, n - earlier.cumulative.getOrDefault(le, 0L)));
      return new WalFsyncs(count - earlier.count, seconds - earlier.seconds, diff);
    }

    /** "412 fsyncs, mean 3.1 ms, half of them within 4 ms", or empty when there were none. */
    java.util.Optional<String> describe() {
      if (count <= 0) {
        return java.util.Optional.empty();
      }
      String median = cumulative.entrySet().stream()
          .filter(e -> e.getValue() * 2 >= count)
          .findFirst()
          .map(e -> ", half of them within " + Stats.ms(e.getKey() * 1000) + " ms")
          .orElse("");
      return java.util.Optional.of(count + " fsyncs, mean " + Stats.ms(seconds * 1000 / count) + " ms" + median);
    }
  }

  InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), clientPort);
  }

  long pid() {
    return process.pid();
  }

  String version() {
    try {
      Process v = new ProcessBuilder(binary().orElseThrow().toString(), "--version").redirectErrorStream(true).start();
      String out = new String(v.getInputStream().readAllBytes());
      v.waitFor(5, TimeUnit.SECONDS);
      return out.lines().findFirst().orElse("etcd").replace("etcd Version: ", "");
    } catch (IOException e) {
      return "unknown";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown";
    }
  }

  private void stop() {
    if (process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    stop();
    try {
      Runtime.getRuntime().removeShutdownHook(stopOnExit);
    } catch (IllegalStateException e) {
      // the JVM is already exiting; the hook stops the process
    }
    Files2.deleteTree(dir);
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on 127.0.0.1", e);
    }
  }
}
