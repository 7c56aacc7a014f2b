package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.baton.conformance.RequiredServer;
import dev.baton.election.Elector;
import dev.baton.election.LeaseRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM to a leader's JVM releases its lease, so another replica on another JVM leads long before
 * the lease (30 s) could run out; with the shutdown hook turned off the lease stays held. Real
 * processes on the real PostgreSQL at 127.0.0.1:5432.
 */
class ShutdownReleaseIT {

  private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

  private final String election = "shutdown-" + UUID.randomUUID();
  private HikariDataSource pool;
  private JdbcLeaseStore store;
  private Process child;
  private Path childLog;

  @BeforeEach
  void openStore() {
    RequiredServer.requireTcp(
        "PostgreSQL",
        "127.0.0.1",
        5432,
        "sudo service postgresql start (user postgres with trust, database test)");
    pool = new HikariDataSource();
    pool.setJdbcUrl(URL);
    pool.setUsername("postgres");
    pool.setMaximumPoolSize(4);
    store = JdbcLeaseStore.builder(pool).build();
  }

  @AfterEach
  void stopAll() throws InterruptedException, IOException {
    if (child != null && child.isAlive()) {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
    }
    if (childLog != null) {
      Files.deleteIfExists(childLog);
    }
    if (store != null) {
      store.close();
    }
    if (pool != null) {
      pool.close();
    }
  }

  @Test
  @DisplayName(
      "SIGTERM to the leader's JVM hands the lease to the replica waiting in another JVM at once")
  void sigtermReleases() throws Exception {
    child = startChild("default");
    awaitElected();
    Elector follower =
        Elector.builder(store)
            .election(election)
            .candidate("follower")
            .leaseDuration(Duration.ofSeconds(30))
            .renewDeadline(Duration.ofSeconds(20))
            .retryPeriod(Duration.ofSeconds(2))
            .closeOnShutdown(false)
            .build();
    try {
      follower.start();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> follower.currentLeader().equals(Optional.of("child")));

      // SIGTERM only: Process.destroy() would also close the child's input, which ends it at once.
      child.toHandle().destroy();
      // Well under the 30 s lease: only a release can hand over this soon.
      try {
        await().atMost(Duration.ofSeconds(15)).until(follower::isLeader);
      } catch (ConditionTimeoutException e) {
        boolean ended = child.waitFor(20, TimeUnit.SECONDS);
        throw new AssertionError(
            "the follower did not lead within 15 s of the SIGTERM; the child "
                + (ended ? "exited with " + child.exitValue() : "is still running")
                + "; its output:\n"
                + childOutput(),
            e);
      }
      assertThat(child.waitFor(20, TimeUnit.SECONDS)).isTrue();
      assertThat(child.exitValue()).isEqualTo(143);
    } finally {
      follower.close();
    }
  }

  @Test
  @DisplayName("with closeOnShutdown(false) a SIGTERM leaves the lease held until it runs out")
  void optOutKeepsTheLease() throws Exception {
    child = startChild("opt-out");
    long token = awaitElected();

    child.toHandle().destroy(); // SIGTERM, leaving the child's input open
    assertThat(child.waitFor(20, TimeUnit.SECONDS)).isTrue();

    Optional<LeaseRecord> record = store.read(election);
    assertThat(record).isPresent();
    assertThat(record.get().holder()).isEqualTo("child");
    assertThat(record.get().token().value()).isEqualTo(token);
  }

  private Process startChild(String mode) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // env --default-signal: a suite started with SIGTERM or SIGINT ignored (a background job, some
    // CI runners) would otherwise hand that on, and the child's JVM would never hear the signal.
    List<String> argv =
        List.of(
            "env",
            "--default-signal=TERM,INT",
            java,
            "-Xmx64m",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            System.getProperty("java.class.path"),
            ShutdownChild.class.getName(),
            URL,
            "postgres",
            election,
            "child",
            mode);
    childLog = Files.createTempFile("baton-shutdown-child-", ".log");
    return new ProcessBuilder(argv)
        .redirectErrorStream(true)
        .redirectOutput(childLog.toFile())
        .redirectInput(ProcessBuilder.Redirect.PIPE)
        .start();
  }

  /** Waits until the child's output says it leads; its token. */
  private long awaitElected() throws IOException {
    return await("the child to lead; its output: " + childOutput())
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> childOutput().lines().filter(l -> l.startsWith("ELECTED ")).findFirst(),
            Optional::isPresent)
        .map(l -> Long.parseLong(l.substring("ELECTED ".length())))
        .orElseThrow();
  }

  private String childOutput() throws IOException {
    return Files.readString(childLog, StandardCharsets.UTF_8);
  }
}
