package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.RequiredServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Process-level chaos: three real {@code elect run} processes with a fenced writer as their command,
 * and a minute of random SIGKILLs, pauses and restarts against the leader (see {@link Chaos}). Runs
 * on the embedded default and on PostgreSQL. {@code -Dchaos.seconds} changes the length, {@code
 * -Dchaos.seed} replays a run.
 */
class ChaosIT {

  private static final Duration LENGTH = Duration.ofSeconds(Long.getLong("chaos.seconds", 60));

  @TempDir Path dir;

  private static long seed() {
    return Long.getLong("chaos.seed", System.nanoTime());
  }

  @Test
  void embedded_default() {
    List<String> violations = new Chaos(dir, "the embedded default (lease files)", false, "", seed()).run(LENGTH);

    keepLogsIf(!violations.isEmpty(), "embedded-default");
    assertThat(violations).isEmpty();
  }

  @Test
  void postgresql() {
    RequiredServer.requireTcp("PostgreSQL", "127.0.0.1", 5432, "the PostgreSQL 15 server of the development machine (user postgres, trust, database test)");
    String backend =
        "election.backend=jdbc\nelection.jdbc.url=jdbc:postgresql://127.0.0.1:5432/test\nelection.jdbc.username=postgres\nelection.jdbc.call-timeout=1s\n";

    List<String> violations = new Chaos(dir, "PostgreSQL", false, backend, seed()).run(LENGTH);

    keepLogsIf(!violations.isEmpty(), "postgresql");
    assertThat(violations).isEmpty();
  }

  /** Every elect's output and the writers' log, kept under target/ when a check failed. */
  private void keepLogsIf(boolean failed, String name) {
    if (!failed) {
      return;
    }
    Path target = Path.of("target", "chaos-failures", name + "-" + System.currentTimeMillis());
    try (Stream<Path> files = Files.list(dir)) {
      Files.createDirectories(target);
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        Files.copy(f, target.resolve(f.getFileName()));
      }
      System.out.println("[chaos] logs kept in " + target.toAbsolutePath());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot keep the chaos logs in " + target, e);
    }
  }
}
