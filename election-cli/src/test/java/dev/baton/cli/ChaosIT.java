package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Process-level chaos: three real {@code elect run} processes with a fenced writer as their
 * command, and a minute of faults against the leader (see {@link Chaos}): SIGKILL and SIGTERM of
 * its elect, a pause of its whole machine, of its elect's JVM alone, of its command alone, and
 * restarts. Runs on each {@link ChaosBackend}: the embedded default and PostgreSQL. {@code
 * -Dchaos.seconds} changes the length, {@code -Dchaos.seed} replays a run, {@code
 * -Dchaos.backend=postgresql} runs one backend only.
 */
class ChaosIT {

  private static final Duration LENGTH = Duration.ofSeconds(Long.getLong("chaos.seconds", 60));

  @TempDir Path dir;

  private static long seed() {
    return Long.getLong("chaos.seed", System.nanoTime());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.baton.cli.ChaosBackend#all")
  void faults_against_the_leader_never_give_two_commands_at_once(ChaosBackend backend) {
    backend.requireServer();

    List<String> violations = new Chaos(dir, backend, seed()).run(LENGTH);

    keepLogsIf(!violations.isEmpty(), backend.slug());
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
