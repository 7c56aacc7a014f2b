package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.RequiredServer;
import dev.baton.testservers.JavaSnippets;
import dev.baton.testservers.MarkdownPage;
import dev.baton.testservers.MarkdownPage.Block;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's service, compiled from the README with its {@code election.properties}, run as a
 * user would: three JVMs on the real PostgreSQL at 127.0.0.1:5432 (the environment points the
 * file's URL there), one leads, a SIGTERM to it hands over to another well within the lease.
 */
class ReadmeExampleIT {

  private static final Pattern BILLING = Pattern.compile("billing run with fencing token (\\d+)");

  /** Long enough that only a release, not an expiry, can hand over within the bound below. */
  private static final Duration LEASE = Duration.ofSeconds(30);

  private final List<Process> replicas = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();

  @AfterEach
  void stopReplicas() throws InterruptedException {
    for (Process p : replicas) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  @DisplayName(
      "the README's service runs in three JVMs, and a SIGTERM to the leader hands over at once")
  void threeReplicasHandOverOnSigterm(@TempDir Path dir) throws Exception {
    RequiredServer.requireTcp(
        "PostgreSQL",
        "127.0.0.1",
        5432,
        "sudo service postgresql start (user postgres with trust, database test)");
    // The README's service and its election.properties: the first properties block, next to it.
    MarkdownPage readme = MarkdownPage.read("README.md").without("## Five minutes in Spring Boot");
    List<Block> services =
        readme.blocks("java").stream()
            .filter(b -> JavaSnippets.publicClass(b).isPresent())
            .toList();
    assertThat(services).hasSize(1);
    assertThat(JavaSnippets.compile(services, page -> JavaSnippets.Context.NONE, dir)).isEmpty();
    Files.writeString(
        dir.resolve("election.properties"), readme.blocks("properties").get(0).text());
    String mainClass =
        JavaSnippets.packageOf("README.md")
            + "."
            + JavaSnippets.publicClass(services.get(0)).orElseThrow();

    String election = "readme-" + UUID.randomUUID();
    for (int i = 1; i <= 3; i++) {
      start(dir, mainClass, election, "replica-" + i);
    }
    int leader = awaitBilling(-1, Duration.ofSeconds(60));
    long token = lastToken(leader).orElseThrow();

    long signalled = System.nanoTime();
    replicas
        .get(leader)
        .toHandle()
        .destroy(); // SIGTERM; Process.destroy() would also close its pipes
    int next;
    try {
      // Half the lease: only a release hands over this soon.
      next = awaitBilling(leader, LEASE.dividedBy(2));
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          "no other replica led within "
              + LEASE.dividedBy(2).toSeconds()
              + " s of the SIGTERM; their output:\n"
              + outputs(),
          e);
    }
    long handoverMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - signalled);
    System.out.println(
        "README service: SIGTERM to the leader, next billing run on another JVM after "
            + handoverMillis
            + " ms");

    assertThat(lastToken(next).orElseThrow()).isGreaterThan(token);
    assertThat(replicas.get(leader).waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(replicas.get(leader).exitValue()).isEqualTo(143);
  }

  private void start(Path dir, String mainClass, String election, String candidate)
      throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath =
        dir.resolve("classes") + File.pathSeparator + System.getProperty("java.class.path");
    Path log = dir.resolve(candidate + ".log");
    // env --default-signal: a suite started with SIGTERM ignored would hand that on to the
    // replicas.
    ProcessBuilder pb =
        new ProcessBuilder(
                "env",
                "--default-signal=TERM,INT",
                java,
                "-Xmx64m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                classpath,
                mainClass)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    Map<String, String> env = pb.environment();
    env.put("ELECTION_NAME", election);
    env.put("ELECTION_CANDIDATE_ID", candidate);
    env.put("ELECTION_JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    env.put("ELECTION_JDBC_USERNAME", "postgres");
    env.put("ELECTION_LEASE_DURATION", LEASE.toSeconds() + "s");
    env.put("ELECTION_RENEW_DEADLINE", "20s");
    replicas.add(pb.start());
    logs.add(log);
  }

  /** Waits until a replica other than {@code not} has printed a billing line; its index. */
  private int awaitBilling(int not, Duration atMost) {
    return await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> {
              for (int i = 0; i < replicas.size(); i++) {
                if (i != not && lastToken(i).isPresent()) {
                  return i;
                }
              }
              return -1;
            },
            i -> i >= 0);
  }

  private Optional<Long> lastToken(int replica) throws IOException {
    Matcher m = BILLING.matcher(Files.readString(logs.get(replica), StandardCharsets.UTF_8));
    Long last = null;
    while (m.find()) {
      last = Long.parseLong(m.group(1));
    }
    return Optional.ofNullable(last);
  }

  private String outputs() throws IOException {
    StringBuilder all = new StringBuilder();
    for (Path log : logs) {
      all.append("--- ")
          .append(log.getFileName())
          .append('\n')
          .append(Files.readString(log, StandardCharsets.UTF_8));
    }
    return all.toString();
  }
}
