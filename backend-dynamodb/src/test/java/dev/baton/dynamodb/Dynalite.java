package dev.baton.dynamodb;

import dev.baton.conformance.RequiredServer;
import dev.baton.conformance.ServerPorts;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A dynalite server (npm, Apache-2.0; in memory) on a free loopback port, run by the {@code node} on
 * the PATH from the copy {@code scripts/test} installs with {@code npm ci} in {@code tools/dynalite}.
 * Stopped by its PID (SIGKILL: it keeps nothing worth flushing), also when the JVM exits early.
 * Without node or dynalite the tests fail in CI and are skipped elsewhere.
 */
final class Dynalite implements AutoCloseable {

  static final String HOW_TO_INSTALL = "(cd tools/dynalite && npm ci --ignore-scripts) from the repository root, or scripts/test";

  /** dynalite wants credentials of SigV4's shape but checks nothing. */
  static final StaticCredentialsProvider CREDENTIALS = StaticCredentialsProvider.create(AwsBasicCredentials.create("baton-test", "baton-test"));

  private final Process process;
  private final int port;
  private final Thread shutdownHook;

  private Dynalite(Process process, int port) {
    this.process = process;
    this.port = port;
    this.shutdownHook = new Thread(process::destroyForcibly, "dynalite-stop");
  }

  static Dynalite start() {
    Optional<Path> node = onPath("node");
    Path cli = home().resolve("node_modules/dynalite/cli.js");
    RequiredServer.require(node.isPresent(), "node (Debian package nodejs), which runs dynalite", "apt-get install nodejs, then " + HOW_TO_INSTALL);
    RequiredServer.require(Files.isRegularFile(cli), "dynalite at " + cli, HOW_TO_INSTALL);
    int port = ServerPorts.belowEphemeralRange();
    Path log;
    Process process;
    try {
      log = Files.createTempFile("dynalite-", ".log");
      ProcessBuilder builder = new ProcessBuilder(node.get().toString(), cli.toString(), "--host", "127.0.0.1", "--port", Integer.toString(port));
      builder.redirectErrorStream(true);
      builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start dynalite", e);
    }
    Dynalite server = new Dynalite(process, port);
    Runtime.getRuntime().addShutdownHook(server.shutdownHook);
    try {
      Awaitility.await("until dynalite (pid " + process.pid() + ", log " + log + ") listens on 127.0.0.1:" + port)
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50))
          .failFast("dynalite exited; see " + log, () -> !process.isAlive())
          .until(() -> RequiredServer.reachable("127.0.0.1", port, Duration.ofMillis(200)));
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    return server;
  }

  InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port);
  }

  /** A client of the server at {@code address} (the server's own, or a proxy's), no retries. */
  static DynamoDbClient client(InetSocketAddress address, Duration callTimeout) {
    return DynamoDbClient.builder()
        .endpointOverride(URI.create("http://127.0.0.1:" + address.getPort()))
        .region(Region.US_EAST_1)
        .credentialsProvider(CREDENTIALS)
        .httpClientBuilder(UrlConnectionHttpClient.builder().connectionTimeout(callTimeout).socketTimeout(callTimeout))
        .overrideConfiguration(c -> c.retryStrategy(AwsRetryStrategy.doNotRetry()))
        .build();
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("dynalite (pid " + process.pid() + ") did not exit within 10 s of SIGKILL");
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

  /** Where scripts/test installed dynalite: the build says so; else tools/dynalite above the module. */
  private static Path home() {
    String configured = System.getProperty("baton.dynalite.home");
    return configured != null ? Path.of(configured).normalize() : Path.of("..", "tools", "dynalite").toAbsolutePath().normalize();
  }

  private static Optional<Path> onPath(String command) {
    String path = System.getenv("PATH");
    List<String> dirs = path == null ? List.of() : Arrays.asList(path.split(File.pathSeparator));
    return dirs.stream().map(d -> Path.of(d, command)).filter(Files::isExecutable).findFirst();
  }
}
