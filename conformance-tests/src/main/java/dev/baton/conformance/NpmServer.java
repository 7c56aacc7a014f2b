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
 * A test server from npm (dynalite, Azurite) on a free loopback port, run by the {@code node} on the
 * PATH from the copy {@code scripts/test} installs with {@code npm ci} in {@code tools/<tool>}.
 * Stopped by its PID (SIGKILL: these servers keep everything in memory), also when the JVM exits
 * early. Without node or the package the tests fail in CI and are skipped elsewhere.
 */
public final class NpmServer implements AutoCloseable {

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
    String howToInstall = "(cd tools/" + tool + " && npm ci --ignore-scripts) from the repository root, or scripts/test";
    Optional<Path> node = onPath("node");
    Path cli = home(tool).resolve("node_modules").resolve(script);
    RequiredServer.require(node.isPresent(), "node (Debian package nodejs), which runs " + tool, "apt-get install nodejs, then " + howToInstall);
    RequiredServer.require(Files.isRegularFile(cli), tool + " at " + cli, howToInstall);
    int port = ServerPorts.belowEphemeralRange();
    Path log;
    Process process;
    try {
      log = Files.createTempFile(tool + "-", ".log");
      List<String> argv = new ArrayList<>(List.of(node.get().toString(), cli.toString()));
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
      Awaitility.await("until " + tool + " (pid " + process.pid() + ", log " + log + ") listens on 127.0.0.1:" + port)
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

  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port);
  }

  public long pid() {
    return process.pid();
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException(tool + " (pid " + process.pid() + ") did not exit within 10 s of SIGKILL");
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

  /** Where scripts/test installed the tool: the build says so; else tools/&lt;tool&gt; above the module. */
  private static Path home(String tool) {
    String configured = System.getProperty("baton." + tool + ".home");
    return configured != null ? Path.of(configured).normalize() : Path.of("..", "tools", tool).toAbsolutePath().normalize();
  }

  private static Optional<Path> onPath(String command) {
    String path = System.getenv("PATH");
    List<String> dirs = path == null ? List.of() : Arrays.asList(path.split(File.pathSeparator));
    return dirs.stream().map(d -> Path.of(d, command)).filter(Files::isExecutable).findFirst();
  }
}
