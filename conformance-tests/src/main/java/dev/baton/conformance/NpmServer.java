package dev.baton.conformance;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.awaitility.Awaitility;

/**
 * A test server from npm (dynalite, Azurite) on a free loopback port, run by the {@code node} on
 * the PATH from the copy {@code scripts/test} installs with {@code npm ci} in {@code tools/<tool>}.
 * Stopped by its PID (SIGKILL: these servers keep everything in memory), also when the JVM exits
 * early; a test can freeze it (SIGSTOP) and thaw it (SIGCONT). Without node or the package the
 * tests fail in CI and are skipped elsewhere.
 */
public final class NpmServer implements FreezableServer, AutoCloseable {

  private final String tool;
  private final Process process;
  private final int port;
  private final Thread shutdownHook;

  private NpmServer(String tool, Process process, int port) {
    this.tool = tool;
    this.process = process;
    this.port = port;
    this.shutdownHook = new Thread(process::destroyForcibly, tool + "-stop");
  }

  /**
   * Starts {@code script} (a path under the tool's {@code node_modules}) with the arguments {@code
   * args} gives for a free port, and waits until it listens on 127.0.0.1 at that port.
   *
   * @param tool the directory under {@code tools/}, also the system property {@code
   *     baton.<tool>.home} the build sets to it
   */
  public static NpmServer start(String tool, String script, IntFunction<List<String>> args) {
    Optional<String> missing = missing(tool, script);
    RequiredServer.require(
        missing.isEmpty(),
        missing.map(m -> m.substring(0, m.indexOf(';'))).orElse(tool),
        howToInstall(tool));
    Path node = onPath("node").orElseThrow();
    Path cli = home(tool).resolve("node_modules").resolve(script);
    int port = ServerPorts.belowEphemeralRange();
    Path log;
    Process process;
    try {
      log = Files.createTempFile(tool + "-", ".log");
      List<String> argv = new ArrayList<>(List.of(node.toString(), cli.toString()));
      argv.addAll(args.apply(port));
      ProcessBuilder builder = new ProcessBuilder(argv);
      builder.redirectErrorStream(true);
      builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + tool, e);
    }
    NpmServer server = new NpmServer(tool, process, port);
    Runtime.getRuntime().addShutdownHook(server.shutdownHook);
    try {
      Awaitility.await(
              "until "
                  + tool
                  + " (pid "
                  + process.pid()
                  + ", log "
                  + log
                  + ") listens on 127.0.0.1:"
                  + port)
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50))
          .failFast(tool + " exited; see " + log, () -> !process.isAlive())
          .until(() -> RequiredServer.reachable("127.0.0.1", port, Duration.ofMillis(200)));
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    return server;
  }

  /** dynalite (DynamoDB, in memory) on a free loopback port, from tools/dynalite. */
  public static NpmServer dynalite() {
    return start(
        "dynalite",
        "dynalite/cli.js",
        port -> List.of("--host", "127.0.0.1", "--port", Integer.toString(port)));
  }

  /**
   * Azurite's blob service (account {@code devstoreaccount1}, in memory) on a free loopback port,
   * from tools/azurite.
   */
  public static NpmServer azuriteBlob() {
    return start(
        "azurite",
        "azurite/dist/src/blob/main.js",
        port ->
            List.of(
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                Integer.toString(port),
                "--inMemoryPersistence",
                "--disableTelemetry",
                "--skipApiVersionCheck",
                "--silent"));
  }

  /**
   * What {@link #start} would miss, and how to install it: node on the PATH, or the package in
   * tools/&lt;tool&gt;. Empty when both are there.
   */
  public static Optional<String> missing(String tool, String script) {
    Path cli = home(tool).resolve("node_modules").resolve(script);
    if (onPath("node").isEmpty()) {
      return Optional.of(
          "node (Debian package nodejs), which runs "
              + tool
              + "; apt-get install nodejs, then "
              + howToInstall(tool));
    }
    if (!Files.isRegularFile(cli)) {
      return Optional.of(tool + " at " + cli + "; " + howToInstall(tool));
    }
    return Optional.empty();
  }

  private static String howToInstall(String tool) {
    return "(cd tools/"
        + tool
        + " && npm ci --ignore-scripts) from the repository root, or scripts/test";
  }

  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port);
  }

  public long pid() {
    return process.pid();
  }

  /** SIGSTOP: the server hangs with its sockets open, as a hung server does. */
  @Override
  public void freeze() {
    Signals.send(alive(), "STOP", toString());
  }

  /** SIGCONT: the frozen server runs on. */
  @Override
  public void thaw() {
    Signals.send(alive(), "CONT", toString());
  }

  private long alive() {
    if (!process.isAlive()) {
      throw new IllegalStateException(this + " is not running");
    }
    return process.pid();
  }

  @Override
  public String toString() {
    return tool + " (pid " + process.pid() + ")";
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException(
            tool + " (pid " + process.pid() + ") did not exit within 10 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down and runs the hook itself
    }
  }

  /**
   * Where scripts/test installed the tool: the build says so; else tools/&lt;tool&gt; in the
   * working directory (the repository root, as scripts/benchmarks runs) or above it (a module's
   * directory).
   */
  private static Path home(String tool) {
    String configured = System.getProperty("baton." + tool + ".home");
    if (configured != null) {
      return Path.of(configured).normalize();
    }
    Path here = Path.of("tools", tool).toAbsolutePath().normalize();
    return Files.isDirectory(here)
        ? here
        : Path.of("..", "tools", tool).toAbsolutePath().normalize();
  }

  private static Optional<Path> onPath(String command) {
    String path = System.getenv("PATH");
    List<String> dirs = path == null ? List.of() : Arrays.asList(path.split(File.pathSeparator));
    return dirs.stream().map(d -> Path.of(d, command)).filter(Files::isExecutable).findFirst();
  }
}
