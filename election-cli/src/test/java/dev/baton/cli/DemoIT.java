package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.testservers.ElectProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code elect demo} as a new user runs it: the real jar, in an empty directory. */
class DemoIT {

  @TempDir Path dir;

  @Test
  void the_demo_narrates_election_crash_failover_and_handover_and_exits_0() {
    ElectProcess.Finished demo = ElectProcess.runToEnd(dir, Duration.ofSeconds(120), "demo");
    System.out.println(demo.output());

    assertThat(demo.status()).isZero();
    Matcher rows =
        Pattern.compile("(first election|crash failover|graceful handover)\\s+(node-\\d)\\s+(\\d+)")
            .matcher(demo.output());
    long previous = 0;
    int found = 0;
    String crashed = null;
    while (rows.find()) {
      long token = Long.parseLong(rows.group(3));
      assertThat(token).as("each new term gets a higher fencing token").isGreaterThan(previous);
      previous = token;
      if (found == 0) {
        crashed = rows.group(2);
      } else {
        assertThat(rows.group(2)).as("the crashed node does not lead again").isNotEqualTo(crashed);
      }
      found++;
    }
    assertThat(found).isEqualTo(3);
    assertThat(dir.resolve(".baton")).isDirectory();
  }
}
