package dev.baton.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.benchmarks.Results.ContenderResult;
import dev.baton.benchmarks.Results.Scale;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark harness in its smoke mode (tiny round counts) on the in-memory store, H2 in server
 * mode and ZooKeeper in this JVM, with Curator's LeaderLatch beside the latter: every measurement
 * runs, including the scale step in a child JVM, and the report and chart come out with all their
 * sections. Nothing here asserts a timing; the figures of a smoke run mean nothing.
 */
class BenchmarkSmokeIT {

  private static final List<String> CONTENDERS =
      List.of("memory", "H2", "ZooKeeper", "Curator LeaderLatch");

  @BeforeAll
  static void keepH2OnLoopback() {
    System.setProperty("h2.bindAddress", "127.0.0.1");
  }

  @Test
  void runsEveryMeasurementAndWritesTheReportAndChart(@TempDir Path out) throws Exception {
    Main.Options options =
        Main.Options.parse(
            "--smoke",
            "--out",
            out.toString(),
            "--only",
            String.join(",", CONTENDERS),
            "--log",
            out.resolve("bench.log").toString());
    ByteArrayOutputStream progress = new ByteArrayOutputStream();

    Main.Run run = Main.run(options, new PrintStream(progress, true, StandardCharsets.UTF_8));

    assertThat(run.skipped()).isEmpty();
    assertThat(run.results()).extracting(r -> r.name).containsExactlyElementsOf(CONTENDERS);
    Settings smoke = Settings.smokeTest();
    for (ContenderResult r : run.results()) {
      assertThat(r.notes).as("%s: problems", r.name).isEmpty();
      assertThat(r.firstLeader.stats().count() + r.firstLeader.failures())
          .as("%s: first-leader rounds", r.name)
          .isEqualTo(smoke.firstLeaderRounds());
      assertThat(r.handover.stats().count() + r.handover.failures())
          .as("%s: handover rounds", r.name)
          .isEqualTo(smoke.handoverRounds());
      assertThat(r.crash.rounds().size() + r.crash.failures())
          .as("%s: crash rounds", r.name)
          .isEqualTo(smoke.crashRounds());
      assertThat(r.idle.nodes()).as("%s: idle nodes", r.name).hasSize(smoke.candidates());
    }
    assertThat(run.scale()).extracting(Scale::backend).containsExactly("memory", "H2", "ZooKeeper");
    for (Scale s : run.scale()) {
      assertThat(s.steps())
          .as("%s: scale steps (%s)", s.backend(), s.note())
          .extracting(Results.ScaleStep::elections)
          .containsExactlyElementsOf(smoke.scaleSizes());
    }

    String md = Files.readString(run.markdown());
    assertThat(md)
        .contains(
            "## Machine",
            "## Versions",
            "## Targets (issue 7)",
            "## Time to first leader",
            "## Graceful handover",
            "## Crash failover and split brain",
            "## Idle load",
            "## Scale: many elections in one process",
            "## Contenders and their settings",
            "## How it is measured",
            "![Handover latency",
            "Smoke run");
    for (String name : CONTENDERS) {
      assertThat(md).contains("| " + name + " |");
    }
    // The chart is well-formed SVG with a row per contender.
    var svg = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(run.chart().toFile());
    assertThat(svg.getDocumentElement().getNodeName()).isEqualTo("svg");
    String chart = Files.readString(run.chart());
    for (String name : CONTENDERS) {
      assertThat(chart)
          .contains(">" + (name.equals("Curator LeaderLatch") ? name : name + " (Baton)") + "<");
    }
    assertThat(progress.toString(StandardCharsets.UTF_8)).contains("wrote " + run.markdown());
  }
}
