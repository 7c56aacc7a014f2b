package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Keeps the heart of the README's service example true: the lines below must stand in it as they
 * are. backend-jdbc's ReadmeSnippetsTest compiles the whole example with its imports, and its
 * ReadmeExampleIT runs it in three JVMs on PostgreSQL.
 */
class ReadmeExampleTest {

  @Test
  @DisplayName("the README example runs leader work per term and stops it on close")
  void readmeExampleWorks() throws Exception {
    Properties file = new Properties();
    file.setProperty("election.name", "billing-cron");
    ElectionProperties properties = ElectionProperties.of(file);
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = System.out;
    System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
    try (LeaseStore store = new MemoryLeaseStore()) {
      // spotless:off
      // README-EXAMPLE-START
    Elector elector = Elector.builder(store)
        .configure(properties)
        .whileLeader(term -> {
          ScheduledExecutorService cron = Executors.newSingleThreadScheduledExecutor();
          cron.scheduleAtFixedRate(() -> {
            if (term.isValid()) {
              System.out.println("billing run with fencing token " + term.token().value());
            }
          }, 0, 1, TimeUnit.MINUTES);
          return cron::shutdownNow; // runs when this term ends, however it ends
        })
        .build();
    elector.start(); // returns at once; the first attempt is immediate
      // README-EXAMPLE-END
      // spotless:on

      await()
          .until(
              () ->
                  printed
                      .toString(StandardCharsets.UTF_8)
                      .contains("billing run with fencing token 1"));
      elector.close();
      assertThat(elector.isLeader()).isFalse();
      assertThat(elector.election()).isEqualTo("billing-cron");
    } finally {
      System.setOut(out);
    }
  }

  @Test
  @DisplayName("the README shows the example exactly as it compiles here")
  void readmeContainsTheExample() throws IOException {
    Path root = Path.of("").toAbsolutePath().getParent();
    String source =
        Files.readString(
            root.resolve("election-api/src/test/java/dev/baton/election/ReadmeExampleTest.java"));
    String example =
        source.substring(
            source.indexOf("// README-EXAMPLE-START") + "// README-EXAMPLE-START".length(),
            source.indexOf("      // README-EXAMPLE-END"));
    String readme = Files.readString(root.resolve("README.md"));

    assertThat(normalise(readme)).contains(normalise(example));
  }

  private static String normalise(String code) {
    return code.lines()
        .map(String::strip)
        .filter(l -> !l.isEmpty())
        .collect(Collectors.joining("\n"));
  }
}
