package dev.baton.benchmarks;

import dev.baton.testservers.EtcdCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One etcd member on loopback, the shared test fixture's {@link EtcdCluster} of one, run from the
 * {@code etcd} binary (Debian's {@code etcd-server} package; {@code scripts/install-etcd} installs
 * it), with what the benchmark reads of it besides: its fsync statistics and its version.
 */
final class EtcdServer implements AutoCloseable {

  private final EtcdCluster cluster;

  private EtcdServer(EtcdCluster cluster) {
    this.cluster = cluster;
  }

  /** The etcd binary: {@code etcd} on the PATH, else {@code /usr/bin/etcd}. */
  static Optional<Path> binary() {
    return EtcdCluster.binary();
  }

  /**
   * The member takes transactions of up to this many operations ({@code --max-txn-ops}; etcd's
   * default is 128), so that the scale run can show what {@code election.etcd.max-txn-ops} saves.
   * Every other contender's transactions stay far below either limit.
   */
  static final int MAX_TXN_OPS = 1024;

  static EtcdServer start() {
    return new EtcdServer(EtcdCluster.start(1, "--max-txn-ops=" + MAX_TXN_OPS));
  }

  /**
   * etcd's own histogram of its write-ahead log fsyncs so far: every write (a put, a transaction, a
   * lease grant or revoke) waits for one before it is answered, so its time is the floor of a
   * write's latency on this machine, whatever the client does.
   */
  WalFsyncs walFsyncs() {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    HttpRequest metrics =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + address().getPort() + "/metrics"))
            .timeout(Duration.ofSeconds(2))
            .build();
    try {
      return WalFsyncs.parse(http.send(metrics, HttpResponse.BodyHandlers.ofString()).body());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read etcd's metrics", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted reading etcd's metrics", e);
    }
  }

  /**
   * Fsync count, total seconds, and cumulative counts per bucket bound (seconds), as etcd reports
   * them.
   */
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
          buckets.put(
              le, (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim()));
        }
      }
      return new WalFsyncs(count, seconds, buckets);
    }

    static final WalFsyncs NONE = new WalFsyncs(0, 0, new java.util.TreeMap<>());

    /** These fsyncs and {@code other}'s together. */
    WalFsyncs plus(WalFsyncs other) {
      java.util.NavigableMap<Double, Long> sum = new java.util.TreeMap<>(cumulative);
      other.cumulative.forEach((le, n) -> sum.merge(le, n, Long::sum));
      return new WalFsyncs(count + other.count, seconds + other.seconds, sum);
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
      String median =
          cumulative.entrySet().stream()
              .filter(e -> e.getValue() * 2 >= count)
              .findFirst()
              .map(e -> ", half of them within " + Stats.ms(e.getKey() * 1000) + " ms")
              .orElse("");
      return java.util.Optional.of(
          count + " fsyncs, mean " + Stats.ms(seconds * 1000 / count) + " ms" + median);
    }
  }

  InetSocketAddress address() {
    return cluster.clientAddresses().get(0);
  }

  long pid() {
    return cluster
        .member(0)
        .pid()
        .orElseThrow(() -> new IllegalStateException("etcd is not running"));
  }

  String version() {
    try {
      Process v =
          new ProcessBuilder(binary().orElseThrow().toString(), "--version")
              .redirectErrorStream(true)
              .start();
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

  @Override
  public void close() {
    cluster.close();
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on 127.0.0.1", e);
    }
  }
}
