package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.testservers.CommandTakeover;
import dev.baton.testservers.CommandTakeover.Round;
import dev.baton.testservers.ConsulServers;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * elect's side of the benchmark report's "{@code elect} beside {@code consul lock}" section, the
 * same driver ({@link CommandTakeover}) on the suite's short timings, so that four faults take a
 * minute and a half, not five: no fault on the leader (SIGTERM, SIGKILL, SIGSTOP of its process
 * group longer than the takeover, a proxy cut) ever runs two commands at once. The side of {@code
 * consul lock}, and both on their defaults, are measured by {@code scripts/benchmarks --only
 * "consul lock"}.
 */
class ElectBesideConsulLockIT {

  /** The suite's short timings. */
  private static final String SHORT_LEASE =
      "election.lease-duration=3s\nelection.renew-deadline=2s\nelection.retry-period=500ms\n";

  /** The jar this module builds, elect and every backend in one, as the distribution ships it. */
  private static final Path ELECT_JAR =
      Path.of(System.getProperty("elect.jar", "target/elect.jar"));

  @TempDir Path dir;

  private ConsulServers consul;

  @BeforeEach
  void start() {
    consul = ConsulServers.dev();
  }

  @AfterEach
  void stop() {
    if (consul != null) {
      consul.close();
    }
  }

  @Test
  void electNeverRunsTwoCommandsAtOnce() {
    PrintStream progress = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    List<Round> rounds;
    try (CommandTakeover run =
        new CommandTakeover(
            consul,
            dir,
            CommandTakeover.elect(ELECT_JAR, SHORT_LEASE),
            CommandTakeover.SETTLE,
            progress)) {
      rounds = run.measure();
    }

    assertThat(rounds).extracting(Round::fault).containsExactlyElementsOf(CommandTakeover.FAULTS);
    for (Round r : rounds) {
      assertThat(r.overlapMillis())
          .as("%s: two commands at once (elect's guard stops the command at the renew deadline)", r)
          .isZero();
      assertThat(r.oldStillRan()).as("%s: the old command still ran", r).isFalse();
    }
  }
}
