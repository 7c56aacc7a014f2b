package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.testservers.ElectProcess;
import dev.baton.testservers.Procs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded default has no server inside a candidate: while the {@code elect} that started first
 * (the one that served the database when the default was H2 with AUTO_SERVER) is paused, the others
 * still elect a leader, once its lease has run out.
 */
class EmbeddedDefaultIT {

  private static final String FAST =
      "election.lease-duration=3s\nelection.renew-deadline=2s\nelection.retry-period=500ms\n";

  @TempDir Path dir;

  private final String election = "it-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<ElectProcess> started = new ArrayList<>();

  @AfterEach
  void killEverythingStarted() {
    started.forEach(
        p -> {
          p.signal("CONT");
          p.close();
        });
  }

  @Test
  void a_new_leader_is_elected_while_the_first_elect_is_paused() throws IOException {
    Path config = Files.writeString(dir.resolve("fast.properties"), FAST);
    Path leader =
        Files.writeString(
            dir.resolve("leader.sh"),
            "#!/bin/sh\necho \"$BATON_CANDIDATE $BATON_FENCING_TOKEN\" >> leaders.txt\nexec sleep 600\n");
    Files.setPosixFilePermissions(leader, PosixFilePermissions.fromString("rwxr-xr-x"));
    ElectProcess first = elect("node-1", config, leader);
    await().atMost(Duration.ofSeconds(60)).until(() -> leaders().size() == 1);
    ElectProcess second = elect("node-2", config, leader);
    ElectProcess third = elect("node-3", config, leader);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                second.output().contains("leader is now 'node-1'")
                    && third.output().contains("leader is now 'node-1'"));

    first.signal("STOP"); // elect's JVM alone: a long GC pause, a stuck JVM

    await().atMost(Duration.ofSeconds(30)).until(() -> leaders().size() == 2);
    assertThat(Procs.state(first.pid())).as("node-1's elect is still paused").isEqualTo("T");
    assertThat(leaders().get(1)).startsWith("node-");
    assertThat(leaders().get(1)).doesNotStartWith("node-1 ");
  }

  private ElectProcess elect(String candidate, Path config, Path command) {
    ElectProcess p =
        ElectProcess.start(
            dir,
            candidate,
            Map.of("ELECTION_CANDIDATE_ID", candidate),
            "run",
            "--config",
            config.toString(),
            "--name",
            election,
            "--",
            command.toString());
    started.add(p);
    return p;
  }

  private List<String> leaders() {
    try {
      Path p = dir.resolve("leaders.txt");
      return Files.exists(p) ? Files.readAllLines(p) : List.of();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
