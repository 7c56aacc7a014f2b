package dev.baton.testservers;

import static java.util.Objects.requireNonNull;

import dev.baton.conformance.RequiredServer;
import dev.baton.conformance.ServerPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real etcd cluster of one or three members on loopback, run from the {@code etcd} binary of the
 * Debian {@code etcd-server} package. Each member gets its own free ports and temporary data
 * directory; members can be killed (SIGKILL) and restarted; everything is stopped by PID on {@link
 * #close()} and, should a test forget, when the JVM exits.
 *
 * <p>Reusable by any test that needs etcd: {@code try (EtcdCluster etcd = EtcdCluster.start(3)) {
 * ... etcd.endpoints() ... }}. Call {@link #requireBinary()} first so that a machine without etcd
 * fails in CI and skips elsewhere.
 */
public final class EtcdCluster implements EtcdServers {

  private static final Logger log = LoggerFactory.getLogger(EtcdCluster.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration POLL = Duration.ofMillis(50);
  private static final Pattern LEADER = Pattern.compile("\"leader\"\\s*:\\s*\"?(\\d+)");
  private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\"\\s*:\\s*\"?(\\d+)");
  private static final Pattern LEASE_ID = Pattern.compile("\"ID\"\\s*:\\s*\"?(-?\\d+)");

  private final List<Member> members;
  private final Path root;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
  private final Thread shutdownHook = new Thread(this::stopAll, "etcd-cluster-stop");

  /** One etcd process: its name, ports and data directory, and the process while it runs. */
  public static final class Member {
    private final String name;
    private final String scheme;
    private final int clientPort;
    private final int peerPort;
    private final int metricsPort;
    private final Path dataDir;
    private final List<String> command = new ArrayList<>();
    private volatile Process process;

    private Member(String name, String scheme, Path dataDir) {
      this.name = name;
      this.scheme = scheme;
      this.clientPort = ServerPorts.belowEphemeralRange();
      this.peerPort = ServerPorts.belowEphemeralRange();
      this.metricsPort = ServerPorts.belowEphemeralRange();
      this.dataDir = dataDir;
    }

    public String name() {
      return name;
    }

    /** {@code http://127.0.0.1:<client port>}, or {@code https://} for a TLS cluster. */
    public String endpoint() {
      return scheme + "://127.0.0.1:" + clientPort;
    }

    /** Plain-HTTP listener for {@code /health} and {@code /metrics}, also on a TLS cluster. */
    String metricsEndpoint() {
      return "http://127.0.0.1:" + metricsPort;
    }

    public int clientPort() {
      return clientPort;
    }

    public boolean isRunning() {
      Process p = process;
      return p != null && p.isAlive();
    }

    /** The process id while the member runs. */
    public Optional<Long> pid() {
      Process p = process;
      return p != null && p.isAlive() ? Optional.of(p.pid()) : Optional.empty();
    }

    @Override
    public String toString() {
      return name + "@" + endpoint();
    }
  }

  private EtcdCluster(List<Member> members, Path root) {
    this.members = List.copyOf(members);
    this.root = root;
  }

  /** The etcd binary: {@code etcd} on the PATH, else {@code /usr/bin/etcd}; empty when neither. */
  public static Optional<Path> binary() {
    String path = System.getenv().getOrDefault("PATH", "");
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "etcd"))) {
        return Optional.of(Path.of(dir, "etcd"));
      }
    }
    Path usrBin = Path.of("/usr/bin/etcd");
    return Files.isExecutable(usrBin) ? Optional.of(usrBin) : Optional.empty();
  }

  /** Fails in CI, skips elsewhere, unless the etcd binary is installed. */
  public static void requireBinary() {
    RequiredServer.require(
        binary().isPresent(),
        "the etcd binary (Debian package etcd-server)",
        "scripts/install-etcd");
  }

  /** Starts {@code size} members and waits until the cluster has a leader and serves. */
  public static EtcdCluster start(int size, String... extraArgs) {
    return start(size, null, List.of(extraArgs));
  }

  /** PEM files for a cluster that serves clients over TLS and requires client certificates. */
  public record Tls(Path caFile, Path serverCertFile, Path serverKeyFile) {}

  /**
   * A cluster whose client endpoints are {@code https://} and require a client certificate signed
   * by {@code tls.caFile()}. {@link #leader()} and {@link #leaseIds()} work only without TLS.
   */
  public static EtcdCluster startTls(int size, Tls tls, String... extraArgs) {
    requireNonNull(tls, "tls");
    List<String> args =
        new ArrayList<>(
            List.of(
                "--cert-file",
                tls.serverCertFile().toString(),
                "--key-file",
                tls.serverKeyFile().toString(),
                "--trusted-ca-file",
                tls.caFile().toString(),
                "--client-cert-auth"));
    args.addAll(List.of(extraArgs));
    return start(size, tls, args);
  }

  private static EtcdCluster start(int size, Tls tls, List<String> extraArgs) {
    if (size < 1) {
      throw new IllegalArgumentException("size must be at least 1, but was " + size);
    }
    Path etcd =
        binary()
            .orElseThrow(
                () -> new IllegalStateException("etcd is not installed; run scripts/install-etcd"));
    // Free ports are found by binding and closing; another process may grab one in between on a
    // shared machine, so a start that fails is tried again on fresh ports.
    RuntimeException failure = null;
    for (int attempt = 1; attempt <= 3; attempt++) {
      EtcdCluster cluster = create(size, etcd, tls != null ? "https" : "http", extraArgs);
      try {
        cluster.members.forEach(cluster::launch);
        cluster.awaitHealthy(START_TIMEOUT);
        return cluster;
      } catch (RuntimeException e) {
        log.warn(
            "etcd cluster did not start (attempt {} of 3), trying fresh ports: {}",
            attempt,
            e.getMessage());
        cluster.close();
        failure = e;
      }
    }
    throw failure;
  }

  private static EtcdCluster create(int size, Path etcd, String scheme, List<String> extraArgs) {
    Path root;
    try {
      root = Files.createTempDirectory("baton-etcd-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<Member> members = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      members.add(new Member("m" + i, scheme, root.resolve("m" + i)));
    }
    String initialCluster =
        members.stream()
            .map(m -> m.name + "=http://127.0.0.1:" + m.peerPort)
            .collect(Collectors.joining(","));
    String token = "baton-" + UUID.randomUUID();
    for (Member m : members) {
      m.command.addAll(
          List.of(
              etcd.toString(),
              "--name",
              m.name,
              "--data-dir",
              m.dataDir.toString(),
              "--listen-client-urls",
              m.endpoint(),
              "--advertise-client-urls",
              m.endpoint(),
              "--listen-peer-urls",
              "http://127.0.0.1:" + m.peerPort,
              "--initial-advertise-peer-urls",
              "http://127.0.0.1:" + m.peerPort,
              "--initial-cluster",
              initialCluster,
              "--initial-cluster-token",
              token,
              "--initial-cluster-state",
              "new",
              "--listen-metrics-urls",
              m.metricsEndpoint(),
              "--logger",
              "zap",
              "--log-outputs",
              "stderr"));
      m.command.addAll(extraArgs);
    }
    EtcdCluster cluster = new EtcdCluster(members, root);
    Runtime.getRuntime().addShutdownHook(cluster.shutdownHook);
    return cluster;
  }

  private void launch(Member m) {
    ProcessBuilder builder = new ProcessBuilder(m.command);
    // ETCD_* variables of the calling environment would override our flags.
    builder.environment().keySet().removeIf(k -> k.startsWith("ETCD_"));
    builder.redirectErrorStream(true);
    builder.redirectOutput(
        ProcessBuilder.Redirect.appendTo(root.resolve(m.name + ".log").toFile()));
    try {
      m.process = builder.start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + m + ": " + e.getMessage(), e);
    }
  }

  public List<Member> members() {
    return members;
  }

  public Member member(int index) {
    return members.get(index);
  }

  /** Client endpoints of every member, running or not, as jetcd's builder takes them. */
  @Override
  public String[] endpoints() {
    return members.stream().map(Member::endpoint).toArray(String[]::new);
  }

  /** Client addresses of every member, for fault proxies in front of them. */
  @Override
  public List<InetSocketAddress> clientAddresses() {
    return members.stream().map(m -> new InetSocketAddress("127.0.0.1", m.clientPort)).toList();
  }

  /** {@link #endpoints()} joined with commas, as {@code election.etcd.endpoints} takes them. */
  public String endpointList() {
    return String.join(",", endpoints());
  }

  /** Kills a member with SIGKILL (no graceful shutdown) and waits until the process is gone. */
  public void kill(Member m) {
    requireNonNull(m, "m");
    Process p = m.process;
    if (p == null) {
      return;
    }
    p.destroyForcibly();
    try {
      if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new IllegalStateException(
            m + " (pid " + p.pid() + ") did not die within 10s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing " + m, e);
    }
  }

  /**
   * Freezes a member with SIGSTOP, as a server that hangs (a stalled disk, a paused VM) looks to
   * its peers and clients: its sockets stay open and nothing answers. {@link #thaw} resumes it.
   */
  public void freeze(Member m) {
    signal(m, "STOP");
  }

  /** Resumes a frozen member with SIGCONT. */
  public void thaw(Member m) {
    signal(m, "CONT");
  }

  private static void signal(Member m, String signal) {
    requireNonNull(m, "m");
    long pid = m.pid().orElseThrow(() -> new IllegalStateException(m + " is not running"));
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
              .redirectErrorStream(true)
              .start();
      if (!kill.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException(
            "kill -"
                + signal
                + " "
                + pid
                + " ("
                + m
                + ") failed: "
                + new String(kill.getInputStream().readAllBytes()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kill -" + signal + " " + pid, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + m, e);
    }
  }

  /** Starts a killed member again on its old ports and data, and waits until it serves. */
  public void restart(Member m) {
    requireNonNull(m, "m");
    if (m.isRunning()) {
      throw new IllegalStateException(m + " is still running");
    }
    launch(m);
    awaitMemberHealthy(m, START_TIMEOUT);
  }

  @Override
  public void killAll() {
    members.forEach(this::kill);
  }

  /**
   * Starts every killed member again on its old ports and data, all at once (a member alone has no
   * quorum and never reports healthy), and waits until the cluster serves.
   */
  public void restartAll() {
    List<Member> stopped = members.stream().filter(m -> !m.isRunning()).toList();
    stopped.forEach(this::launch);
    stopped.forEach(m -> awaitMemberHealthy(m, START_TIMEOUT));
  }

  /** The member that is the raft leader now, as the running members report it. */
  public Optional<Member> leader() {
    for (Member m : members) {
      if (!m.isRunning()) {
        continue;
      }
      Optional<String> status = post(m, "/v3/maintenance/status", "{}");
      if (status.isEmpty()) {
        continue;
      }
      Matcher leader = LEADER.matcher(status.get());
      Matcher self = MEMBER_ID.matcher(status.get());
      if (leader.find() && self.find() && leader.group(1).equals(self.group(1))) {
        return Optional.of(m);
      }
    }
    return Optional.empty();
  }

  /** Waits until some member reports itself the leader. */
  public Member awaitLeader(Duration timeout) {
    return Awaitility.await("an etcd leader (logs in " + root + ")")
        .atMost(timeout)
        .pollInterval(POLL)
        .until(this::leader, Optional::isPresent)
        .orElseThrow();
  }

  /** A running member that is not the leader. */
  public Member follower() {
    Member leader = awaitLeader(Duration.ofSeconds(15));
    return members.stream()
        .filter(m -> m != leader && m.isRunning())
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no running follower"));
  }

  /**
   * Ids of the etcd leases that exist now, through the lease list API (etcd 3.3+). Only for
   * clusters without authentication.
   */
  public List<Long> leaseIds() {
    for (Member m : members) {
      if (!m.isRunning()) {
        continue;
      }
      Optional<String> body = post(m, "/v3/lease/leases", "{}");
      if (body.isPresent()) {
        List<Long> ids = new ArrayList<>();
        Matcher id = LEASE_ID.matcher(body.get());
        while (id.find()) {
          ids.add(Long.parseLong(id.group(1)));
        }
        return ids;
      }
    }
    throw new IllegalStateException("no running member answered the lease list");
  }

  /** Waits until every running member reports healthy (the cluster has a leader). */
  public void awaitHealthy(Duration timeout) {
    for (Member m : members) {
      if (m.isRunning()) {
        awaitMemberHealthy(m, timeout);
      }
    }
  }

  private void awaitMemberHealthy(Member m, Duration timeout) {
    Awaitility.await(m + " healthy (log: " + log(m) + ")")
        .atMost(timeout)
        .pollInterval(POLL)
        .until(
            () -> {
              if (!m.isRunning()) {
                throw new IllegalStateException(
                    m + " exited with " + m.process.exitValue() + "; see " + log(m));
              }
              return get(m, "/health")
                  .filter(body -> body.contains("\"health\":\"true\""))
                  .isPresent();
            });
  }

  /** Where a member writes its log. */
  public Path log(Member m) {
    return root.resolve(m.name + ".log");
  }

  private Optional<String> get(Member m, String path) {
    return send(HttpRequest.newBuilder(URI.create(m.metricsEndpoint() + path)).GET());
  }

  private Optional<String> post(Member m, String path, String json) {
    return send(
        HttpRequest.newBuilder(URI.create(m.endpoint() + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)));
  }

  private Optional<String> send(HttpRequest.Builder request) {
    try {
      HttpResponse<String> response =
          http.send(
              request.timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? Optional.of(response.body()) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Kills every member by PID and deletes the data directories. */
  @Override
  public void close() {
    stopAll();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down and runs the hook itself
    }
  }

  private void stopAll() {
    for (Member m : members) {
      Process p = m.process;
      if (p != null && p.isAlive()) {
        p.destroyForcibly();
      }
    }
    for (Member m : members) {
      Process p = m.process;
      if (p != null) {
        try {
          p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    deleteRecursively(root);
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(EtcdCluster::delete);
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not delete etcd data under {}: {}", dir, e.toString());
    }
  }

  private static void delete(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String toString() {
    return "etcd cluster " + members;
  }
}
