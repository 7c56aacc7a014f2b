package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.CapturedLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * H2 writes commits to its file up to WRITE_DELAY late; a grant confirmed in that window dies with
 * the process hosting the database (ElectRunIT shows the repeated token). The store says so once,
 * on an H2 file database whose commits can be late, and nowhere else.
 */
class H2WriteDelayTest {

  @TempDir Path dir;

  @ParameterizedTest(name = "{0}: warns {1}")
  @CsvSource({"file, true", "file;WRITE_DELAY=0, false", "mem, false"})
  void warnsOfLateCommitsOnlyWhereAProcessDeathCanLoseAGrant(String mode, boolean warns) {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(
        mode.startsWith("mem")
            ? "jdbc:h2:mem:write-delay-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1"
            : "jdbc:h2:" + dir.resolve("leases") + mode.substring("file".length()));
    List<String> warnings;
    try (CapturedLog log = CapturedLog.start();
        JdbcLeaseStore store = JdbcLeaseStore.builder(ds).build()) {
      assertThat(store.tryAcquire("write-delay", "node-a", Duration.ofSeconds(5)).isGranted())
          .isTrue();
      assertThat(store.tryAcquire("write-delay-2", "node-a", Duration.ofSeconds(5)).isGranted())
          .isTrue();
      warnings = log.linesAtWarnOrAbove().stream().filter(l -> l.contains("WRITE_DELAY")).toList();
    }
    if (warns) {
      assertThat(warnings)
          .singleElement()
          .asString()
          .contains("500 ms")
          .contains(";WRITE_DELAY=0 in the URL")
          .contains(dir.toString());
    } else {
      assertThat(warnings).isEmpty();
    }
  }
}
