package dev.baton.testservers;

import static java.util.Objects.requireNonNull;

import dev.baton.conformance.FreezableServer;
import dev.baton.conformance.RequiredServer;
import dev.baton.conformance.ServerPorts;
import java.io.File;
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
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Real Consul servers on loopback, run from the {@code consul} binary that {@code
 * scripts/install-consul} puts in {@code tools/consul/bin} (Debian 11's Consul 1.8.7): a dev agent
 * ({@link #dev}, everything in memory, about 2 s to start), or one or three servers that keep their
 * data on disk ({@link #start}), so a killed server comes back with it. Every agent gets its own
 * free ports; everything is stopped by PID on {@link #close()} and, should a test forget, when the
 * JVM exits.
 *
 * <p>Every agent takes {@code session_ttl_min = "1s"}: Consul refuses session TTLs under 10 s by
 * default, and the conformance suite's leases last 3 s.
 */
public final class ConsulServers implements FreezableServer, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ConsulServers.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration POLL = Duration.ofMillis(100);

  private final List<Agent> agents;
  private final Path root;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
  private final Thread shutdownHook = new Thread(this::stopAll, "consul-stop");

  /** One consul process: its ports and data directory, and the process while it runs. */
  public static final class Agent {
    private final String name;
    private final int httpPort = ServerPorts.belowEphemeralRange();
    private final int serfLanPort = ServerPorts.belowEphemeralRange();
    private final int serfWanPort = ServerPorts.belowEphemeralRange();
    private final int serverPort = ServerPorts.belowEphemeralRange();
    private final List<String> command = new ArrayList<>();
    private volatile Process process;

    private Agent(String name) {
      this.name = name;
    }

    public String name() {
      return name;
    }

    public InetSocketAddress httpAddress() {
      return new InetSocketAddress("127.0.0.1", httpPort);
    }

    public boolean isRunning() {
      Process p = process;
      return p != null && p.isAlive();
    }

    public Optional<Long> pid() {
      Process p = process;
      return p != null && p.isAlive() ? Optional.of(p.pid()) : Optional.empty();
    }

    @Override
    public String toString() {
      return name + "@127.0.0.1:" + httpPort;
    }
  }

  private ConsulServers(List<Agent> agents, Path root) {
    this.agents = List.copyOf(agents);
    this.root = root;
  }

  /**
   * The consul binary: {@code baton.consul.home}/bin/consul (the build sets it), else {@code
   * tools/consul/bin/consul} here or one directory up (a module's directory), else {@code consul}
   * on the PATH.
   */
  public static Optional<Path> binary() {
    List<Path> candidates = new ArrayList<>();
    String home = System.getProperty("baton.consul.home");
    if (home != null) {
      candidates.add(Path.of(home, "bin", "consul"));
    }
    candidates.add(Path.of("tools", "consul", "bin", "consul").toAbsolutePath());
    candidates.add(Path.of("..", "tools", "consul", "bin", "consul").toAbsolutePath().normalize());
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty()) {
        candidates.add(Path.of(dir, "consul"));
      }
    }
    return candidates.stream().filter(Files::isExecutable).findFirst();
  }

  /** Fails in CI, skips elsewhere, unless the consul binary is installed. */
  public static void requireBinary() {
    RequiredServer.require(
        binary().isPresent(),
        "the consul binary (tools/consul/bin/consul, from Debian 11's consul package)",
        "scripts/install-consul");
  }

  /** One dev agent (a server, data in memory) with {@code extraHcl} added to its configuration. */
  public static ConsulServers dev(String... extraHcl) {
    return start(0, List.of(extraHcl));
  }

  /** {@code size} servers (1 or 3) that keep their data on disk, with a leader elected. */
  public static ConsulServers start(int size, String... extraHcl) {
    if (size != 1 && size != 3) {
      throw new IllegalArgumentException("size must be 1 or 3, but was " + size);
    }
    return start(size, List.of(extraHcl));
  }

  private static ConsulServers start(int size, List<String> extraHcl) {
    requireBinary();
    Path consul = binary().orElseThrow();
    // Free ports are found by binding and closing; another process may take one in between on a
    // shared machine, so a start that fails is tried again on fresh ports.
    RuntimeException failure = null;
    for (int attempt = 1; attempt <= 3; attempt++) {
      ConsulServers servers = create(consul, size, extraHcl);
      try {
        servers.agents.forEach(servers::launch);
        servers.awaitServing(START_TIMEOUT);
        return servers;
      } catch (RuntimeException e) {
        log.warn("consul did not start (attempt {} of 3): {}", attempt, e.getMessage());
        servers.close();
        failure = e;
      }
    }
    throw failure;
  }

  private static ConsulServers create(Path consul, int size, List<String> extraHcl) {
    Path root;
    try {
      root = Files.createTempDirectory("baton-consul-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    boolean dev = size == 0;
    List<Agent> agents = new ArrayList<>();
    for (int i = 0; i < Math.max(size, 1); i++) {
      agents.add(new Agent("c" + i));
    }
    for (Agent a : agents) {
      a.command.addAll(
          List.of(
              consul.toString(),
              "agent",
              "-node",
              a.name,
              "-bind",
              "127.0.0.1",
              "-advertise",
              "127.0.0.1",
              "-client",
              "127.0.0.1",
              "-http-port",
              Integer.toString(a.httpPort),
              "-dns-port",
              "-1",
              "-grpc-port",
              "-1",
              "-serf-lan-port",
              Integer.toString(a.serfLanPort),
              "-serf-wan-port",
              Integer.toString(a.serfWanPort),
              "-server-port",
              Integer.toString(a.serverPort),
              "-disable-host-node-id",
              "-hcl",
              "session_ttl_min = \"1s\"",
              "-hcl",
              "disable_update_check = true",
              "-hcl",
              "performance { raft_multiplier = 1 }"));
      if (dev) {
        a.command.add("-dev");
      } else {
        a.command.addAll(
            List.of(
                "-server",
                "-bootstrap-expect",
                Integer.toString(size),
                "-data-dir",
                root.resolve(a.name).toString()));
        for (Agent other : agents) {
          if (other != a) {
            a.command.addAll(List.of("-retry-join", "127.0.0.1:" + other.serfLanPort));
          }
        }
      }
      for (String hcl : extraHcl) {
        a.command.addAll(List.of("-hcl", hcl));
      }
    }
    ConsulServers servers = new ConsulServers(agents, root);
    Runtime.getRuntime().addShutdownHook(servers.shutdownHook);
    return servers;
  }

  private void launch(Agent a) {
    ProcessBuilder builder = new ProcessBuilder(a.command);
    // CONSUL_* variables of the calling environment (a token, an address) would change the agent.
    builder.environment().keySet().removeIf(k -> k.startsWith("CONSUL_"));
    builder.redirectErrorStream(true);
    builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log(a).toFile()));
    builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    try {
      a.process = builder.start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start consul " + a + ": " + e.getMessage(), e);
    }
  }

  public List<Agent> agents() {
    return agents;
  }

  public Agent agent(int index) {
    return agents.get(index);
  }

  /** Every agent's HTTP address, in agent order. */
  public List<InetSocketAddress> httpAddresses() {
    return agents.stream().map(Agent::httpAddress).toList();
  }

  /** Where an agent writes its log. */
  public Path log(Agent a) {
    return root.resolve(a.name + ".log");
  }

  /** SIGSTOP to every agent: their sockets stay open and nothing answers. */
  @Override
  public void freeze() {
    agents.forEach(a -> signal(a, "STOP"));
  }

  /** SIGCONT to every agent. */
  @Override
  public void thaw() {
    agents.forEach(a -> signal(a, "CONT"));
  }

  public void freeze(Agent a) {
    signal(a, "STOP");
  }

  public void thaw(Agent a) {
    signal(a, "CONT");
  }

  private static void signal(Agent a, String signal) {
    long pid = a.pid().orElseThrow(() -> new IllegalStateException(a + " is not running"));
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
              .redirectErrorStream(true)
              .start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException(
            "kill -"
                + signal
                + " "
                + pid
                + " ("
                + a
                + ") failed: "
                + new String(kill.getInputStream().readAllBytes()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kill -" + signal + " " + pid, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + a, e);
    }
  }

  /** {@code a} alone as a {@link FreezableServer}, for the frozen-server scenario. */
  public FreezableServer freezable(Agent a) {
    requireNonNull(a, "a");
    return new FreezableServer() {
      @Override
      public void freeze() {
        signal(a, "STOP");
      }

      @Override
      public void thaw() {
        signal(a, "CONT");
      }

      @Override
      public String toString() {
        return "consul " + a + " (pid " + a.pid().map(String::valueOf).orElse("-") + ")";
      }
    };
  }

  /** The server that is the Raft leader now, as a running agent reports it. */
  public Optional<Agent> leader() {
    for (Agent a : agents) {
      if (!a.isRunning()) {
        continue;
      }
      Optional<String> body = body(a, "/v1/status/leader");
      if (body.isPresent()) {
        String address = body.get().replace("\"", "").trim();
        return agents.stream().filter(x -> address.equals("127.0.0.1:" + x.serverPort)).findFirst();
      }
    }
    return Optional.empty();
  }

  /** Kills an agent with SIGKILL and waits until its process is gone. */
  public void kill(Agent a) {
    Process p = requireNonNull(a, "a").process;
    if (p == null) {
      return;
    }
    p.destroyForcibly();
    try {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException(a + " (pid " + p.pid() + ") did not die within 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing " + a, e);
    }
  }

  /** Kills every agent (SIGKILL); servers' data stays for {@link #restartAll()}. */
  public void killAll() {
    agents.forEach(this::kill);
  }

  /** Starts every killed agent again on its ports and data, and waits until Consul serves. */
  public void restartAll() {
    agents.stream().filter(a -> !a.isRunning()).forEach(this::launch);
    awaitServing(START_TIMEOUT);
  }

  /**
   * Waits until every running agent knows a leader and answers a consistent read (which only a
   * leader that has confirmed its leadership serves).
   */
  public void awaitServing(Duration timeout) {
    for (Agent a : agents) {
      if (!a.isRunning()) {
        continue;
      }
      Awaitility.await(a + " serving (log: " + log(a) + ")")
          .atMost(timeout)
          .pollInterval(POLL)
          .until(
              () -> {
                if (!a.isRunning()) {
                  throw new IllegalStateException(
                      a + " exited with " + a.process.exitValue() + "; see " + log(a));
                }
                Optional<Integer> leader = status(a, "/v1/status/leader");
                Optional<Integer> read = status(a, "/v1/kv/baton-start-probe?consistent");
                // 404: no such key, as expected; 403: ACLs deny the anonymous token. Either is an
                // answer a leader gave; 500 means there is none yet.
                int answer = read.orElse(0);
                return leader.isPresent()
                    && leader.get() == 200
                    && (answer == 404 || answer == 403);
              });
    }
  }

  private Optional<String> body(Agent a, String path) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.httpPort + path))
                  .timeout(Duration.ofSeconds(2))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? Optional.of(response.body()) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private Optional<Integer> status(Agent a, String path) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.httpPort + path))
                  .timeout(Duration.ofSeconds(2))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (path.startsWith("/v1/status/leader") && response.body().replace("\"", "").isBlank()) {
        return Optional.empty();
      }
      return Optional.of(response.statusCode());
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Kills every agent by PID and deletes the data directories. */
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
    for (Agent a : agents) {
      Process p = a.process;
      if (p != null && p.isAlive()) {
        p.destroyForcibly();
      }
    }
    for (Agent a : agents) {
      Process p = a.process;
      if (p != null) {
        try {
          p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not delete consul data under {}: {}", root, e.toString());
    }
  }

  @Override
  public String toString() {
    return "consul " + agents;
  }
}
