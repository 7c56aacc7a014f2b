package dev.baton.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Whether a chaos candidate serves the store to the others: an embedded H2 database in AUTO_SERVER
 * mode, whose lock file under {@code .baton} names the port of the process that serves it. Only for
 * a {@link ChaosBackend} whose store a candidate serves.
 */
final class EmbeddedServer {

  private EmbeddedServer() {}

  /**
   * True when {@code pid} listens on the port that the embedded database's lock file in {@code dir}
   * names. H2 rewrites that file in place, so a read can catch it empty: read again for a while.
   * When it cannot tell, says why to {@code say} and answers true (the looser bounds).
   */
  static boolean serves(Path dir, long pid, Consumer<String> say) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    Optional<Integer> port = serverPort(dir);
    while (port.isEmpty() && System.nanoTime() - deadline < 0) {
      try {
        TimeUnit.MILLISECONDS.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
      port = serverPort(dir);
    }
    if (port.isEmpty()) {
      say.accept(
          "  (cannot tell whether "
              + pid
              + " serves the database, so the looser bounds apply: the lock file names no server)");
      return true;
    }
    return listensOn(pid, port.get(), say);
  }

  private static Optional<Integer> serverPort(Path dir) {
    Path file = dir.resolve(".baton").resolve("elect.lock.db");
    try (var in = Files.newInputStream(file)) {
      Properties lock = new Properties();
      lock.load(in);
      String server = lock.getProperty("server", "");
      return server.contains(":")
          ? Optional.of(Integer.parseInt(server.substring(server.lastIndexOf(':') + 1)))
          : Optional.empty();
    } catch (IOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static boolean listensOn(long pid, int port, Consumer<String> say) {
    try {
      String portHex = String.format(Locale.ROOT, ":%04X", port);
      List<String> inodes = new ArrayList<>();
      for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
        for (String line : Files.readAllLines(Path.of(table))) {
          String[] f = line.trim().split("\\s+");
          if (f.length > 9 && f[1].endsWith(portHex) && f[3].equals("0A")) {
            inodes.add("socket:[" + f[9] + "]");
          }
        }
      }
      try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
        return fds.anyMatch(
            fd -> {
              try {
                return inodes.contains(Files.readSymbolicLink(fd).toString());
              } catch (IOException e) {
                return false;
              }
            });
      }
    } catch (IOException | RuntimeException e) {
      say.accept(
          "  (cannot tell whether "
              + pid
              + " serves the database, so the looser bounds apply: "
              + e
              + ")");
      return true;
    }
  }
}
