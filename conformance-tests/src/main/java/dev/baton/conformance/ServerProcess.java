package dev.baton.conformance;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A server that a test runs as a child JVM on the test's own classpath (an H2 TCP server, a
 * ZooKeeper server), so that it can be frozen with SIGSTOP as a hung server is: its sockets stay
 * open and nothing answers. Signals go to the child's PID only.
 */
public final class ServerProcess implements FreezableServer, AutoCloseable {

  private final String name;
  private final Process process;
  private final Path log;

  /**
   * Kills the server when the test JVM exits without closing it (a test that failed before its
   * cleanup, a run stopped with Ctrl-C): a server left running, frozen or not, would load the
   * machine for every run after it.
   */
  private final Thread killAtExit;

  private ServerProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.killAtExit = new Thread(process::destroyForcibly, name + "-kill-at-exit");
  }

  /**
   * Starts {@code mainClass} with {@code args} in a new JVM with {@code systemProperties} (each
   * {@code -Dkey=value}), its output in {@code log}, and waits until it listens on {@code port} on
   * the loopback address.
   */
  public static ServerProcess start(
      String name,
      Path log,
      List<String> systemProperties,
      String mainClass,
      List<String> args,
      int port) {
    List<String> argv = new ArrayList<>();
    argv.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    argv.addAll(List.of("-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    argv.addAll(systemProperties);
    argv.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
    argv.addAll(args);
    Process p;
    try {
      p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name + " (" + mainClass + ")", e);
    }
    ServerProcess server = new ServerProcess(name, p, log);
    Runtime.getRuntime().addShutdownHook(server.killAtExit);
    try {
      await(name + " listening on port " + port + " (its output: " + log + ")")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> !p.isAlive() || listens(port));
      if (!p.isAlive()) {
        throw new IllegalStateException(
            name
                + " exited with "
                + p.exitValue()
                + " before it listened; the end of its output ("
                + log
                + "):\n"
                + tail(log));
      }
    } catch (RuntimeException | Error e) {
      server.close();
      throw e;
    }
    return server;
  }

  private static String tail(Path log) {
    try {
      String all = Files.readString(log);
      return all.substring(Math.max(0, all.length() - 3000));
    } catch (IOException e) {
      return "(cannot read it: " + e + ")";
    }
  }

  private static boolean listens(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  public long pid() {
    return process.pid();
  }

  /** SIGSTOP: the server hangs with its sockets open. */
  @Override
  public void freeze() {
    signal("STOP");
  }

  /** SIGCONT: the frozen server runs on. */
  @Override
  public void thaw() {
    signal("CONT");
  }

  private void signal(String signal) {
    if (!process.isAlive()) {
      throw new IllegalStateException(this + " is not running; its output: " + log);
    }
    Signals.send(process.pid(), signal, toString());
  }

  /** Kills the server (SIGKILL works on a frozen process too) and waits for it to be gone. */
  @Override
  public void close() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException(this + " did not die within 10 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping " + this, e);
    }
    try {
      Runtime.getRuntime().removeShutdownHook(killAtExit);
    } catch (IllegalStateException e) {
      // The JVM is exiting already, and the hook has run or is running.
    }
  }

  @Override
  public String toString() {
    return name + " (pid " + process.pid() + ")";
  }
}
