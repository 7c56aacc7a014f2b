package dev.baton.conformance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test does when the real server it needs is not there: with {@code CI=true} it fails, so a
 * missing server can never pass silently; on a developer's machine it is skipped with a message
 * that says what to start.
 */
public final class RequiredServer {

  private RequiredServer() {}

  public static boolean inCi() {
    return "true".equalsIgnoreCase(System.getenv("CI"));
  }

  /** True when a TCP connection to {@code host:port} opens within {@code timeout}. */
  public static boolean reachable(String host, int port, Duration timeout) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Fails (in CI) or skips (elsewhere) unless {@code available}.
   *
   * @param what the server, as a person would name it: {@code PostgreSQL at 127.0.0.1:5432}
   * @param howToStart the command or step that makes it available
   */
  public static void require(boolean available, String what, String howToStart) {
    if (available) {
      return;
    }
    String message = what + " is not reachable; start it with: " + howToStart;
    if (inCi()) {
      Assertions.fail(message + " (CI=true: a missing server fails the build)");
    }
    Assumptions.abort(message + " (skipped outside CI)");
  }

  /** {@link #require} for a TCP server on loopback. */
  public static void requireTcp(String what, String host, int port, String howToStart) {
    require(
        reachable(host, port, Duration.ofSeconds(2)),
        what + " at " + host + ":" + port,
        howToStart);
  }
}
