package dev.baton.cli;

import dev.baton.election.ElectionListener;
import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code elect run}: campaigns, runs the command while leader, stops it when the term ends, and
 * campaigns again. Exits with the command's status when it ends on its own; on SIGTERM, SIGINT or
 * SIGHUP stops it, releases the lease, and exits.
 */
final class RunCommand {

  private static final Logger log = LoggerFactory.getLogger("elect");

  private RunCommand() {}

  static int run(Arguments.Run args, Path workingDirectory) {
    // Everything that can be wrong with the arguments or configuration is found before the
    // backend is touched or a thread started.
    ElectionConfig config = ElectionConfig.load(args.config(), args.name(), workingDirectory);
    ElectionConfig.Timing timing = config.checkTiming();
    Duration grace = grace(args.grace(), timing);
    for (String tool : CommandProcess.TOOLS) {
      if (findOnPath(tool).isEmpty()) {
        throw new UsageException(
            "elect run needs '"
                + tool
                + "' on PATH (bash and util-linux) to keep the command from outliving elect; PATH is "
                + System.getenv("PATH"));
      }
    }
    if (!Files.isReadable(Uptime.FILE)) {
      throw new UsageException(
          "elect run needs "
              + Uptime.FILE
              + " (Linux) for the clock it shares with the command's guard; it is not readable here");
    }
    checkExecutable(args.command().get(0), workingDirectory);

    ScheduledExecutorService feed =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "elect-guard-feed");
              t.setDaemon(true);
              return t;
            });
    LeaderCommand leaderCommand =
        new LeaderCommand(args.command(), grace, args.restart(), new Spawner(), feed);
    LeaseStore store = config.openStore();
    Elector elector;
    try {
      // elect has its own shutdown order (stop the command, then close): no second hook of Baton's.
      elector =
          Elector.builder(store)
              .configure(config.properties())
              .closeOnShutdown(false)
              .listener(new Narrator())
              .whileLeader(leaderCommand)
              .build();
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    Shutdown shutdown = new Shutdown(elector, store);
    Signals.onTermination(shutdown::run);
    // Any other way out (System.exit, a signal the JVM keeps to itself) still stops the command
    // and releases, if it can.
    Runtime.getRuntime().addShutdownHook(new Thread(shutdown::run, "elect-shutdown"));
    log.info(
        "campaigning in election '{}' as '{}' on {}; timing: lease {}, renew deadline {}, retry {}; grace {}",
        elector.election(),
        elector.candidate(),
        config.describeBackend(),
        Durations.format(timing.leaseDuration()),
        Durations.format(timing.renewDeadline()),
        Durations.format(timing.retryPeriod()),
        Durations.format(grace));
    elector.start();
    int status = leaderCommand.finished().join();
    shutdown.run();
    return status;
  }

  /**
   * The grace period must end before another candidate can be granted the lease: a leader that
   * cannot renew steps down at the renew deadline, and its lease lasts until leaseDuration, so the
   * command has {@code leaseDuration - renewDeadline} to be gone. A reserve of that, half of it up
   * to a second, is kept for the guard and the kernel to act: the guard wakes some tens of
   * milliseconds late on a loaded host, and a killed command takes some to go (up to 81 ms after
   * SIGKILL in ChaosIT's runs on two busy cores). The default is the longest grace accepted.
   */
  static Duration grace(Optional<Duration> asked, ElectionConfig.Timing timing) {
    Duration margin = timing.leaseDuration().minus(timing.renewDeadline());
    Duration reserve =
        margin.dividedBy(2).compareTo(Duration.ofSeconds(1)) < 0
            ? margin.dividedBy(2)
            : Duration.ofSeconds(1);
    Duration longest = margin.minus(reserve);
    if (asked.isEmpty()) {
      return longest;
    }
    Duration grace = asked.get();
    if (grace.compareTo(longest) > 0) {
      throw new UsageException(
          "--grace "
              + Durations.format(grace)
              + " is too long: it must be at most "
              + Durations.format(longest)
              + ", which is election.lease-duration - election.renew-deadline less a reserve of half of that, at most 1s, for the guard and the kernel to act ("
              + Durations.format(timing.leaseDuration())
              + " - "
              + Durations.format(timing.renewDeadline())
              + " - "
              + Durations.format(reserve)
              + "), so that the command has stopped before another candidate can be elected; shorten --grace or lengthen the lease");
    }
    return grace;
  }

  private static void checkExecutable(String command, Path workingDirectory) {
    if (command.contains("/")) {
      Path file = workingDirectory.resolve(command);
      if (!Files.isRegularFile(file) || !Files.isExecutable(file)) {
        throw UsageException.commandNotFound("COMMAND '" + command + "' is not an executable file");
      }
      return;
    }
    if (findOnPath(command).isEmpty()) {
      throw UsageException.commandNotFound(
          "COMMAND '" + command + "' is not found on PATH (" + System.getenv("PATH") + ")");
    }
  }

  static Optional<Path> findOnPath(String program) {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, program);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  /** Says who leads when it changes; the elector itself logs this node's own terms. */
  private static final class Narrator implements ElectionListener {
    @Override
    public void onLeaderChanged(Optional<String> leader) {
      leader.ifPresent(l -> log.info("leader is now '{}'", l));
    }
  }

  /**
   * Stops the command (through the elector: its term ends first), releases the lease, and closes
   * the store: once, whether the command ended, or SIGTERM or SIGINT came.
   */
  private static final class Shutdown {
    private final Elector elector;
    private final LeaseStore store;
    private boolean done;

    Shutdown(Elector elector, LeaseStore store) {
      this.elector = elector;
      this.store = store;
    }

    synchronized void run() {
      if (done) {
        return;
      }
      done = true;
      elector.close();
      store.close();
    }
  }
}
