package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.testservers.ElectProcess;
import dev.baton.testservers.Procs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code elect run} and {@code elect status} as real processes on the embedded default (lease files
 * under ./.baton/leases of a temporary working directory), built from the shaded jar.
 */
class ElectRunIT {

  /** Short timing, so that a crash fails over in seconds. */
  private static final String FAST =
      "election.lease-duration=3s\nelection.renew-deadline=2s\nelection.retry-period=500ms\n";

  /**
   * A long lease with quick retries: a takeover well within the lease can only follow a release.
   */
  private static final String LONG_LEASE =
      "election.lease-duration=15s\nelection.renew-deadline=10s\nelection.retry-period=500ms\n";

  @TempDir Path dir;

  private final String election = "it-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<ElectProcess> started = new ArrayList<>();

  @AfterEach
  void killEverythingStarted() {
    started.forEach(ElectProcess::close);
  }

  private Path file(String name, String text) {
    try {
      return Files.writeString(dir.resolve(name), text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String script(String name, String body) {
    Path p = file(name, "#!/bin/sh\n" + body + "\n");
    try {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p.toString();
  }

  private ElectProcess elect(String candidate, String config, String... runArgs) {
    return elect(candidate, false, config, runArgs);
  }

  private ElectProcess elect(
      String candidate, boolean underNohup, String config, String... runArgs) {
    List<String> args = new ArrayList<>(List.of("run", "--config", config, "--name", election));
    args.addAll(List.of(runArgs));
    ElectProcess p =
        ElectProcess.start(
            dir,
            candidate,
            Map.of("ELECTION_CANDIDATE_ID", candidate),
            underNohup,
            args.toArray(String[]::new));
    started.add(p);
    return p;
  }

  private List<String> lines(String name) {
    try {
      Path p = dir.resolve(name);
      return Files.exists(p) ? Files.readAllLines(p) : List.of();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private ElectProcess.Finished status(String config) {
    return ElectProcess.runToEnd(
        dir, Duration.ofSeconds(60), "status", "--config", config, "--name", election);
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  @Test
  void one_leader_among_three_and_its_command_sees_election_candidate_and_token() {
    String config = file("long.properties", LONG_LEASE).toString();
    String leader =
        script(
            "leader.sh",
            "echo \"$BATON_ELECTION $BATON_CANDIDATE $BATON_FENCING_TOKEN $$\" >> leaders.txt\nexec sleep 600");
    elect("node-1", config, "--", leader);
    elect("node-2", config, "--", leader);
    elect("node-3", config, "--", leader);

    await().atMost(Duration.ofSeconds(60)).until(() -> runningCommands().size() == 1);
    // Never two at once, checked every 100ms for longer than a renew deadline. (Leadership may
    // still move on a machine this busy; exclusion is what must hold.)
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(10))
        .until(() -> runningCommands().size() <= 1);
    await().atMost(Duration.ofSeconds(30)).until(() -> runningCommands().size() == 1);

    String[] fields = runningCommands().get(0);
    assertThat(fields[0]).isEqualTo(election);
    assertThat(fields[1]).isIn("node-1", "node-2", "node-3");
    assertThat(fields[2]).matches("[1-9][0-9]*");

    ElectProcess.Finished status = status(config);
    assertThat(status.status()).isZero();
    assertThat(status.output())
        .contains("election  " + election)
        .contains("leader    " + fields[1])
        .contains("token     " + fields[2])
        .contains("renewed   ")
        .contains("backend   file (" + dir.toAbsolutePath().resolve(".baton/leases"));
  }

  /** The lines of leaders.txt whose command (the pid in the last field) still runs. */
  private List<String[]> runningCommands() {
    return lines("leaders.txt").stream()
        .map(l -> l.split(" "))
        .filter(f -> Procs.running(Long.parseLong(f[3])))
        .toList();
  }

  @Test
  void sigterm_stops_the_command_and_releases_so_that_another_takes_over_within_the_lease() {
    String config = file("long.properties", LONG_LEASE).toString();
    String leader =
        script(
            "leader.sh",
            "echo \"$BATON_CANDIDATE $BATON_FENCING_TOKEN $$\" >> leaders.txt\nexec sleep 600");
    ElectProcess one = elect("node-1", config, "--", leader);
    ElectProcess two = elect("node-2", config, "--", leader);
    await().atMost(Duration.ofSeconds(60)).until(() -> !lines("leaders.txt").isEmpty());
    String[] first = lines("leaders.txt").get(0).split(" ");
    ElectProcess leading = first[0].equals("node-1") ? one : two;
    long command = Long.parseLong(first[2]);

    long sent = System.nanoTime();
    leading.signal("TERM");

    assertThat(leading.waitFor(Duration.ofSeconds(30)))
        .as("elect exits as a shell reports SIGTERM")
        .contains(143);
    assertThat(Procs.running(command)).as("the command was stopped before elect exited").isFalse();
    // The old lease, renewed at most 500ms before the signal, had 14.5s or more to run: a successor
    // inside that time means it was released.
    await().atMost(Duration.ofSeconds(14)).until(() -> lines("leaders.txt").size() == 2);
    long took = System.nanoTime() - sent;
    String[] second = lines("leaders.txt").get(1).split(" ");
    assertThat(second[0]).isNotEqualTo(first[0]);
    assertThat(Long.parseLong(second[1])).isGreaterThan(Long.parseLong(first[1]));
    System.out.printf(
        "[ElectRunIT] SIGTERM to the leader -> %s led with token %s after %d ms (lease 15s, retry 500ms)%n",
        second[0], second[1], ms(took));
  }

  @Test
  void a_command_that_exits_ends_elect_with_its_status_after_releasing() {
    String config = file("long.properties", LONG_LEASE).toString();
    ElectProcess only = elect("node-1", config, "--", "sh", "-c", "exit 7");

    assertThat(only.waitFor(Duration.ofSeconds(60))).contains(7);
    ElectProcess.Finished status = status(config);
    assertThat(status.output()).contains("leader    none");
    assertThat(status.status())
        .as("nobody leads: the lease was released, not left to expire")
        .isEqualTo(1);
  }

  @Test
  void restart_runs_the_command_again_in_the_same_term() {
    String config = file("fast.properties", FAST).toString();
    String runs = script("runs.sh", "echo \"$BATON_FENCING_TOKEN\" >> runs.txt\nexit 3");
    ElectProcess only = elect("node-1", config, "--restart", "--", runs);

    await().atMost(Duration.ofSeconds(60)).until(() -> lines("runs.txt").size() >= 3);
    assertThat(only.isAlive()).isTrue();
    assertThat(lines("runs.txt").stream().distinct()).as("one term, one token").hasSize(1);

    only.signal("TERM");
    assertThat(only.waitFor(Duration.ofSeconds(30))).contains(143);
  }

  // Under nohup, elect and everything it starts inherit SIGHUP ignored; the guard must still hear
  // of elect's death (found when CI itself was started under nohup).
  @ParameterizedTest(name = "started under nohup: {0}")
  @ValueSource(booleans = {false, true})
  void when_elect_is_killed_its_command_and_grandchild_die_long_before_another_is_elected(
      boolean underNohup) {
    String config = file("fast.properties", FAST).toString();
    String orphan =
        script(
            "orphan.sh",
            String.join(
                "\n",
                "sleep 600 &",
                "echo $! > \"$BATON_CANDIDATE.grandchild\"",
                "echo $$ > \"$BATON_CANDIDATE.child\"",
                "echo \"$BATON_CANDIDATE $BATON_FENCING_TOKEN\" >> leaders.txt",
                "wait"));
    ElectProcess one = elect("node-1", underNohup, config, "--", orphan);
    ElectProcess two = elect("node-2", underNohup, config, "--", orphan);
    await().atMost(Duration.ofSeconds(60)).until(() -> !lines("leaders.txt").isEmpty());
    String first = lines("leaders.txt").get(0).split(" ")[0];
    ElectProcess leading = first.equals("node-1") ? one : two;
    long child = Long.parseLong(lines(first + ".child").get(0).trim());
    long grandchild = Long.parseLong(lines(first + ".grandchild").get(0).trim());
    assertThat(Procs.running(child)).isTrue();
    assertThat(Procs.running(grandchild)).isTrue();

    long killed = System.nanoTime();
    leading.signal("KILL");

    // Within the lease (3s) nobody else can be elected; the orphans must be gone well before.
    await()
        .pollInterval(Duration.ofMillis(20))
        .atMost(Duration.ofSeconds(20))
        .until(() -> !Procs.running(child) && !Procs.running(grandchild));
    long gone = System.nanoTime() - killed;
    assertThat(lines("leaders.txt")).as("nobody else leads yet while the orphans die").hasSize(1);
    await().atMost(Duration.ofSeconds(60)).until(() -> lines("leaders.txt").size() == 2);
    long successor = System.nanoTime() - killed;
    System.out.printf(
        "[ElectRunIT] SIGKILL to the leader's elect -> its command and grandchild gone within %d ms; next leader after %d ms (lease 3s)%n",
        ms(gone), ms(successor));
  }

  /**
   * A command that logs to events.txt when it starts and when SIGTERM stops it (a SIGKILL leaves no
   * line), and otherwise runs until stopped.
   */
  private String loggingCommand() {
    return script(
        "logging.sh",
        String.join(
            "\n",
            "trap 'echo \"$BATON_CANDIDATE stop\" >> events.txt; exit 0' TERM",
            "echo \"$BATON_CANDIDATE start $$\" >> events.txt",
            "while :; do sleep 0.1; done"));
  }

  // Ctrl-Z stops a foreground job's whole process group (SIGTSTP), and so does kill -STOP -PGID.
  // The guard lived in elect's group and stopped with it, while the command, in a session of its
  // own, ran on beside the next leader's until elect's group was resumed. (SIGSTOP stands in for
  // SIGTSTP here: elect's group in this test has no parent in its session, and the kernel drops
  // SIGTSTP, SIGTTIN and SIGTTOU sent to such an orphaned group.)
  @Test
  void stopping_elects_process_group_past_the_lease_stops_its_command_before_another_leads() {
    String signal = "STOP";
    String config = file("fast.properties", FAST).toString();
    String command = loggingCommand();
    ElectProcess one = elect("node-1", config, "--grace", "500ms", "--", command);
    ElectProcess two = elect("node-2", config, "--grace", "500ms", "--", command);
    await().atMost(Duration.ofSeconds(60)).until(() -> !lines("events.txt").isEmpty());
    String first = lines("events.txt").get(0).split(" ")[0];
    String second = first.equals("node-1") ? "node-2" : "node-1";
    ElectProcess leading = first.equals("node-1") ? one : two;

    leading.signalGroup(signal);
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> lines("events.txt").stream().anyMatch(l -> l.startsWith(second + " start")));
      assertThat(Procs.state(leading.pid())).as("elect is still stopped").isEqualTo("T");
    } finally {
      leading.signalGroup("CONT");
    }

    List<String> events = lines("events.txt");
    int stopped = events.indexOf(first + " stop");
    int started =
        events.indexOf(
            events.stream().filter(l -> l.startsWith(second + " start")).findFirst().orElseThrow());
    assertThat(stopped)
        .as(
            "the line where %s's command was stopped by SIGTERM, before %s's started at line %d, with %s's process group stopped by SIG%s; events: %s",
            first, second, started, first, signal, events)
        .isNotNegative()
        .isLessThan(started);
  }

  // What a hangup of the terminal means: step down as on SIGTERM. Before, the guard (in elect's
  // group) took the hangup for elect's death and killed the command without its grace.
  @Test
  void a_hangup_to_elects_process_group_stops_the_command_with_sigterm_releases_and_exits_129() {
    String config = file("long.properties", LONG_LEASE).toString();
    ElectProcess only = elect("node-1", config, "--", loggingCommand());
    await().atMost(Duration.ofSeconds(60)).until(() -> !lines("events.txt").isEmpty());

    only.signalGroup("HUP");

    assertThat(only.waitFor(Duration.ofSeconds(30)))
        .as("elect exits as a shell reports SIGHUP")
        .contains(129);
    assertThat(lines("events.txt"))
        .as("the command was stopped with SIGTERM, not killed")
        .contains("node-1 stop");
    ElectProcess.Finished status = status(config);
    assertThat(status.output()).contains("leader    none");
  }

  // nohup elect run ... & in an SSH session: when the session drops, the shell sends SIGHUP to
  // the job's process group. elect ignores it as nohup asked; the command must run on too.
  @Test
  void under_nohup_a_hangup_to_elects_process_group_leaves_elect_and_its_command_running() {
    String config = file("long.properties", LONG_LEASE).toString();
    ElectProcess only = elect("node-1", true, config, "--", loggingCommand());
    await().atMost(Duration.ofSeconds(60)).until(() -> !lines("events.txt").isEmpty());
    long command = Long.parseLong(lines("events.txt").get(0).split(" ")[2]);

    only.signalGroup("HUP");

    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .until(() -> only.isAlive() && Procs.running(command));
    assertThat(lines("events.txt")).as("nothing stopped the command").hasSize(1);
    only.signal("TERM");
    assertThat(only.waitFor(Duration.ofSeconds(30))).contains(143);
  }

  // H2 writes commits to its file in the background (WRITE_DELAY, 500 ms unless told otherwise).
  // Killing the elect that served the file just after its grant lost the grant, and the next
  // leader was handed the same fencing token (seen once in about twenty chaos runs).
  @Test
  void a_grant_outlives_the_kill_of_the_elect_that_serves_the_database() {
    String config = file("fast.properties", FAST).toString();
    String leader =
        script(
            "leader.sh",
            "echo \"$BATON_CANDIDATE $BATON_FENCING_TOKEN\" >> leaders.txt\nexec sleep 600");
    ElectProcess one = elect("node-1", config, "--", leader);
    await()
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(5))
        .atMost(Duration.ofSeconds(60))
        .until(() -> lines("leaders.txt").size() == 1);
    one.signal("KILL");
    assertThat(one.waitFor(Duration.ofSeconds(30)))
        .as("node-1 is dead before node-2 opens the database")
        .isPresent();

    elect("node-2", config, "--", leader);
    await().atMost(Duration.ofSeconds(60)).until(() -> lines("leaders.txt").size() == 2);

    long first = Long.parseLong(lines("leaders.txt").get(0).split(" ")[1]);
    long second = Long.parseLong(lines("leaders.txt").get(1).split(" ")[1]);
    assertThat(second)
        .as("the token granted after the crash, against the one granted before it")
        .isGreaterThan(first);
  }

  @Test
  void status_watch_prints_each_change_and_tells_a_release_from_an_expiry() {
    String config = file("fast.properties", FAST).toString();
    // The watch opens the embedded database first and so serves it: the candidates' exits below do
    // not move the database, and the watch reads on without a gap. With the default timing: the
    // fast one's 1 s call timeout can pass while the first process creates the database.
    ElectProcess watch =
        ElectProcess.start(dir, "watch", Map.of(), "status", "--name", election, "--watch");
    started.add(watch);
    await().atMost(Duration.ofSeconds(60)).until(() -> watch.output().contains("watching"));
    assertThat(watch.output()).contains("leader    none");

    ElectProcess one = elect("node-1", config, "--", "sleep", "600");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> watch.output().contains("leader node-1, token"));
    one.signal("TERM");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> watch.output().contains("no leader: the lease was released (was node-1, token"));

    ElectProcess two = elect("node-2", config, "--", "sleep", "600");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> watch.output().contains("leader node-2, token"));
    two.signal("KILL");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                watch
                    .output()
                    .contains(
                        "no leader: the lease expired, not renewed within its lease of 3s (was node-2, token"));

    watch.signal("INT");
    assertThat(watch.waitFor(Duration.ofSeconds(30)))
        .as("SIGINT ends the watch as a shell reports it")
        .contains(130);
  }

  @Test
  void bad_arguments_end_the_real_process_with_status_2_and_start_nothing() {
    ElectProcess.Finished result =
        ElectProcess.runToEnd(dir, Duration.ofSeconds(60), "run", "--grace", "10s", "--", "true");

    assertThat(result.status()).isEqualTo(2);
    assertThat(result.output()).contains("elect: --grace 10s is too long");
    assertThat(dir.resolve(".baton")).doesNotExist();
  }
}
