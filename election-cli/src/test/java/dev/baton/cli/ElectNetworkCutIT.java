package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FaultProxy;
import dev.baton.conformance.RequiredServer;
import dev.baton.testservers.ElectProcess;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The leader's {@code elect} cut off from PostgreSQL (through a {@link FaultProxy}: packets
 * dropped, or connections refused) while another candidate reaches it: the leader's command must be
 * gone before the other's starts, and the other leads once the lease has expired.
 */
class ElectNetworkCutIT {

  private static final String TIMING =
      "election.lease-duration=3s\nelection.renew-deadline=2s\nelection.retry-period=500ms\nelection.jdbc.call-timeout=1s\n";

  @TempDir Path dir;

  private final String election = "cut-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<AutoCloseable> started = new ArrayList<>();

  @AfterEach
  void stopEverything() throws Exception {
    for (AutoCloseable c : started) {
      c.close();
    }
  }

  private ElectProcess elect(String candidate, int port, Path log) throws IOException {
    Path config =
        Files.writeString(
            dir.resolve(candidate + ".properties"),
            TIMING
                + "election.backend=jdbc\nelection.jdbc.url=jdbc:postgresql://127.0.0.1:"
                + port
                + "/test\nelection.jdbc.username=postgres\n");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classes =
        Path.of(System.getProperty("elect.testClasses", "target/test-classes"))
            .toAbsolutePath()
            .toString();
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
            java,
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Xmx32m",
            "-cp",
            classes,
            FencedWriter.class.getName(),
            log.toString());
    started.add(p);
    return p;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blackhole", "cut"})
  void a_leader_cut_off_from_the_store_stops_its_command_before_another_can_start(String fault)
      throws IOException {
    RequiredServer.requireTcp(
        "PostgreSQL",
        "127.0.0.1",
        5432,
        "the PostgreSQL 15 server of the development machine (user postgres, trust, database test)");
    FaultProxy proxy = FaultProxy.start(new InetSocketAddress("127.0.0.1", 5432));
    started.add(proxy);
    Path log = dir.resolve("writer.log");
    ElectProcess leader = elect("node-1", proxy.port(), log);
    await().atMost(Duration.ofSeconds(60)).until(() -> WriterLog.read(log).count("accept") > 0);
    ElectProcess other = elect("node-2", 5432, log);

    long at = System.nanoTime();
    if (fault.equals("cut")) {
      proxy.cut();
    } else {
      proxy.blackhole();
    }

    // node-1 may run its command more than once before it is cut off for good: its guard stops it
    // at a deadline a starved elect did not move in time, and a late renewal runs it again in the
    // same term. What must hold is that no node-1 run overlaps a node-2 run.
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              WriterLog read = WriterLog.read(log);
              return runsOf(read, "node-2").stream().anyMatch(r -> read.accepted(r.token));
            });
    WriterLog w = WriterLog.read(log);
    String runs =
        describe(w, at)
            + "\nnode-1's elect said:\n"
            + leader.output()
            + "node-2's elect said:\n"
            + other.output();
    List<WriterLog.Instance> first = runsOf(w, "node-1");
    WriterLog.Instance next = runsOf(w, "node-2").get(0);
    assertThat(w.instances.values().iterator().next().candidate)
        .as("the first command to run was node-1's; runs: %s", runs)
        .isEqualTo("node-1");
    assertThat(first)
        .as(
            "every run of node-1's command wrote its last line before node-2's started; runs: %s",
            runs)
        .allSatisfy(r -> assertThat(r.last).isLessThan(next.first));
    assertThat(w.tokenViolations()).as("runs: %s", runs).isEmpty();
    WriterLog.Instance last = first.get(first.size() - 1);
    System.out.printf(
        "[ElectNetworkCutIT] %s of the leader's store connection -> its command's last line after %d ms, the next command's first after %d ms"
            + " (lease 3s, renew deadline 2s, retry 500ms; node-1 ran its command %d times)%n",
        fault, ms(last.last - at), ms(next.first - at), first.size());
  }

  private static List<WriterLog.Instance> runsOf(WriterLog w, String candidate) {
    return w.instances.values().stream().filter(i -> i.candidate.equals(candidate)).toList();
  }

  /** Each run with its first and last line, in ms from the fault. */
  private static String describe(WriterLog w, long at) {
    StringBuilder b = new StringBuilder();
    for (WriterLog.Instance i : w.instances.values()) {
      b.append(String.format("%n  %s: %d..%d ms", i, ms(i.first - at), ms(i.last - at)));
    }
    return b.toString();
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
