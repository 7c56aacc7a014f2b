package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class CommandProcessTest {

  private static final Spawner SPAWNER = new Spawner();
  private static final ScheduledExecutorService FEED = Executors.newSingleThreadScheduledExecutor();

  @AfterAll
  static void stopFeed() {
    FEED.shutdownNow();
  }

  @Test
  void the_guard_stops_the_command_on_its_own_when_the_deadline_passes_without_news()
      throws IOException {
    // Valid for 600 ms at the start, then never renewed: what a frozen elect looks like to the
    // guard.
    AtomicBoolean first = new AtomicBoolean(true);
    CommandProcess p =
        CommandProcess.start(
            SPAWNER,
            List.of("sleep", "600"),
            Map.of(),
            Duration.ofMillis(200),
            () -> first.getAndSet(false) ? Duration.ofMillis(600) : Duration.ZERO,
            FEED);
    long started = System.nanoTime();

    int status = p.exited().orTimeout(20, TimeUnit.SECONDS).join();

    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertThat(p.stoppedForDeadline()).as("the guard says it was its deadline").isTrue();
    assertThat(status).as("SIGTERM, as the shell reports it").isEqualTo(143);
    assertThat(took).as("not before the deadline it was told").isGreaterThanOrEqualTo(550);
  }

  @Test
  void the_guard_kills_a_command_that_ignores_sigterm_by_its_grace_however_slow_its_checks_are()
      throws IOException {
    // A loaded host, as when the guard is most needed: each look at the process group takes half a
    // second. The kill must still come when the grace runs out, not after so many looks.
    Path bin = Files.createTempDirectory("elect-slow-pgrep-");
    Path slowPgrep = bin.resolve("pgrep");
    Files.writeString(slowPgrep, "#!/bin/sh\nsleep 0.5\nexec /usr/bin/pgrep \"$@\"\n");
    assertThat(slowPgrep.toFile().setExecutable(true)).isTrue();
    AtomicBoolean first = new AtomicBoolean(true);
    CommandProcess p =
        CommandProcess.start(
            SPAWNER,
            List.of("sh", "-c", "trap '' TERM; sleep 600"),
            Map.of("PATH", bin + ":" + System.getenv("PATH")),
            Duration.ofMillis(500),
            () -> first.getAndSet(false) ? Duration.ofMillis(600) : Duration.ZERO,
            FEED);
    long started = System.nanoTime();

    try {
      p.exited().orTimeout(30, TimeUnit.SECONDS).join();
    } finally {
      Files.delete(slowPgrep);
      Files.delete(bin);
    }

    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertThat(p.stoppedForDeadline()).as("the guard says it was its deadline").isTrue();
    // Deadline 600 ms, grace 500 ms, one more look of about 550 ms; counting ten looks instead
    // took over 6 s.
    assertThat(took).as("ms from start until the command was killed").isLessThan(4000);
  }

  @Test
  void a_command_whose_term_is_renewed_runs_on_and_its_own_end_is_its_own() throws IOException {
    CommandProcess p =
        CommandProcess.start(
            SPAWNER,
            List.of("sh", "-c", "sleep 1.5; exit 7"),
            Map.of(),
            Duration.ofMillis(200),
            () -> Duration.ofMillis(400),
            FEED);

    int status = p.exited().orTimeout(20, TimeUnit.SECONDS).join();

    assertThat(status).isEqualTo(7);
    assertThat(p.stoppedForDeadline()).as("a deadline kept 400 ms ahead never passed").isFalse();
  }

  @Test
  void a_term_already_over_never_starts_the_command() throws IOException {
    Path marker = Path.of(System.getProperty("java.io.tmpdir"), "elect-never-" + System.nanoTime());
    CommandProcess p =
        CommandProcess.start(
            SPAWNER,
            List.of("touch", marker.toString()),
            Map.of(),
            Duration.ofMillis(200),
            () -> Duration.ZERO,
            FEED);

    p.exited().orTimeout(20, TimeUnit.SECONDS).join();

    assertThat(p.stoppedForDeadline()).isTrue();
    assertThat(marker).doesNotExist();
  }

  @Test
  void a_url_that_carries_a_password_is_not_passed_on_and_one_without_is() {
    Map<String, String> env =
        CommandProcess.commandEnvironment(
            Map.of(
                "ELECTION_JDBC_URL", "jdbc:postgresql://db/app?user=u&password=hunter2",
                "ELECTION_ETCD_ENDPOINTS", "http://root:pw@127.0.0.1:2379",
                "ELECTION_ZOOKEEPER_CONNECT_STRING", "127.0.0.1:2181"),
            Map.of());

    assertThat(env)
        .doesNotContainKeys("ELECTION_JDBC_URL", "ELECTION_ETCD_ENDPOINTS")
        .containsEntry("ELECTION_ZOOKEEPER_CONNECT_STRING", "127.0.0.1:2181");
    assertThat(env.toString()).doesNotContain("hunter2").doesNotContain("pw");
  }

  @Test
  void no_secret_of_any_backend_reaches_the_command_in_its_environment_spelling() {
    Map<String, String> env =
        CommandProcess.commandEnvironment(
            Map.of(
                "ELECTION_ZOOKEEPER_DIGEST", "baton:zk-s3cret",
                "ELECTION_AZURE_BLOB_CONNECTION_STRING",
                    "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=az-s3cret",
                "ELECTION_AZURE_BLOB_SAS_TOKEN", "sv=2022&sig=sas-s3cret",
                "ELECTION_ETCD_PASSWORD", "etcd-s3cret",
                "ELECTION_ZOOKEEPER_CONNECT_STRING", "127.0.0.1:2181"),
            Map.of());

    assertThat(env)
        .containsOnlyKeys("ELECTION_ZOOKEEPER_CONNECT_STRING")
        .extracting(Map::toString)
        .asString()
        .doesNotContain("s3cret");
  }

  @Test
  void the_command_gets_elects_environment_and_the_term_but_not_elects_secrets() {
    Map<String, String> env =
        CommandProcess.commandEnvironment(
            Map.of(
                "PATH", "/usr/bin",
                "ELECTION_JDBC_URL", "jdbc:postgresql://db/app",
                "ELECTION_JDBC_PASSWORD", "hunter2",
                "ELECTION_ETCD_AUTH_TOKEN", "t0k3n",
                "ELECTION_KUBERNETES_CLIENT_KEY", "k3y"),
            Map.of("BATON_FENCING_TOKEN", "7"));

    assertThat(env)
        .containsEntry("PATH", "/usr/bin")
        .containsEntry("ELECTION_JDBC_URL", "jdbc:postgresql://db/app")
        .containsEntry("BATON_FENCING_TOKEN", "7")
        .doesNotContainKeys(
            "ELECTION_JDBC_PASSWORD", "ELECTION_ETCD_AUTH_TOKEN", "ELECTION_KUBERNETES_CLIENT_KEY");
  }
}
