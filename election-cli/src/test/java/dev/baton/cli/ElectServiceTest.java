package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.ElectionProperties;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/elect.service keeps the failover figures docs/elect.md gives for it, with the default
 * timing; and the unit docs/elect.md quotes is the file's. (systemd itself reads the file in
 * ElectDistributionIT.)
 */
class ElectServiceTest {

  private static final Path DOCS = Path.of("..", "docs");
  private static final Pattern INI_BLOCK = Pattern.compile("(?s)```ini\n(.*?)```");

  private static Map<String, String> unit() throws IOException {
    Map<String, String> settings = new HashMap<>();
    for (String line : Files.readAllLines(DOCS.resolve("elect.service"))) {
      int eq = line.indexOf('=');
      if (!line.startsWith("#") && eq > 0) {
        settings.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return settings;
  }

  /** elect's timing with nothing configured; the directory is only named, never created. */
  private static ElectionConfig.Timing defaults() {
    return ElectionConfig.resolve(
            ElectionProperties.of(new Properties(), Map.of()), Optional.empty(), Path.of("unused"))
        .checkTiming();
  }

  private static Duration seconds(Map<String, String> unit, String key) {
    Matcher m = Pattern.compile("(\\d+)s").matcher(unit.getOrDefault(key, ""));
    assertThat(m.matches()).as(key + " in whole seconds, but was " + unit.get(key)).isTrue();
    return Duration.ofSeconds(Long.parseLong(m.group(1)));
  }

  @Test
  void sigterm_goes_to_elect_alone_and_a_clean_stop_is_no_failure() throws IOException {
    Map<String, String> unit = unit();

    assertThat(unit).containsEntry("KillMode", "mixed").containsEntry("SuccessExitStatus", "143");
    assertThat(unit).doesNotContainKey("KillSignal");
    assertThat(unit.get("ExecStart")).startsWith("/opt/elect/bin/elect run ");
  }

  @Test
  void systemd_waits_for_the_grace_and_restarts_no_sooner_than_a_lease_and_a_retry()
      throws IOException {
    Map<String, String> unit = unit();
    ElectionConfig.Timing timing = defaults();
    Duration longestGrace = timing.leaseDuration().minus(timing.renewDeadline());

    // The grace is at most lease - renew deadline, and the release one call within the renew
    // deadline: a stop timeout of a lease or more never cuts a graceful stop short.
    assertThat(seconds(unit, "TimeoutStopSec"))
        .isGreaterThanOrEqualTo(longestGrace.plus(timing.renewDeadline()));
    assertThat(seconds(unit, "RestartSec"))
        .isGreaterThanOrEqualTo(timing.leaseDuration().plus(timing.retryPeriod()));
    assertThat(unit).containsEntry("Restart", "on-failure");
  }

  @Test
  void the_unit_the_manual_quotes_is_the_file() throws IOException {
    Matcher block = INI_BLOCK.matcher(Files.readString(DOCS.resolve("elect.md")));
    assertThat(block.find()).as("an ini block in docs/elect.md").isTrue();
    List<String> file = Files.readAllLines(DOCS.resolve("elect.service"));

    for (String line : block.group(1).split("\n")) {
      assertThat(file).as("docs/elect.service").contains(line);
    }
  }
}
