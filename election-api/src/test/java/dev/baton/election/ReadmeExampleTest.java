package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Keeps the README's code example compiling and true: the example below must stand in it as is. */
class ReadmeExampleTest {

  /** Stands in for the user's downstream system, which keeps the highest token it has seen. */
  static final class Invoices {
    final List<Long> sentWithToken = new CopyOnWriteArrayList<>();

    void send(FencingToken token) {
      sentWithToken.add(token.value());
    }
  }

  @Test
  @DisplayName("the README example runs leader work per term and stops it on close")
  void readmeExampleWorks() throws Exception {
    Invoices invoices = new Invoices();
    try (LeaseStore store = new MemoryLeaseStore()) {
      // README-EXAMPLE-START
      Elector elector = Elector.builder(store)
          .election("billing-cron")
          .whileLeader(term -> {
            ScheduledExecutorService cron = Executors.newSingleThreadScheduledExecutor();
            cron.scheduleAtFixedRate(() -> {
              if (term.isValid()) {
                invoices.send(term.token()); // the token goes with every write
              }
            }, 0, 1, TimeUnit.MINUTES);
            return cron::shutdownNow; // runs when this term ends, however it ends
          })
          .build();
      elector.start(); // returns at once; the first attempt is immediate
      // on shutdown, elector.close() stops the work, then releases: another replica takes over at once
      // README-EXAMPLE-END

      await().until(() -> !invoices.sentWithToken.isEmpty());
      elector.close();
      assertThat(invoices.sentWithToken).containsOnly(1L);
      assertThat(elector.isLeader()).isFalse();
    }
  }

  @Test
  @DisplayName("the README shows the example exactly as it compiles here")
  void readmeContainsTheExample() throws IOException {
    Path root = Path.of("").toAbsolutePath().getParent();
    String source =
        Files.readString(root.resolve("election-api/src/test/java/dev/baton/election/ReadmeExampleTest.java"));
    String example =
        source.substring(source.indexOf("// README-EXAMPLE-START") + "// README-EXAMPLE-START".length(), source.indexOf("      // README-EXAMPLE-END"));
    String readme = Files.readString(root.resolve("README.md"));

    assertThat(normalise(readme)).contains(normalise(example));
  }

  private static String normalise(String code) {
    return code.lines().map(String::strip).filter(l -> !l.isEmpty()).collect(Collectors.joining("\n"));
  }
}
