package dev.baton.cli;

import dev.baton.election.Term;
import dev.baton.election.TermWork;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command, run for each term this node leads: started with the term's election, candidate and
 * fencing token in its environment, stopped when the term ends (by elect, or by its guard when
 * elect is too stalled to do it in time). When it ends on its own, {@link #finished()} tells {@code
 * elect} to release and exit with its status, or it runs again in the same term ({@code
 * --restart}).
 */
final class LeaderCommand implements TermWork {

  /** {@code elect} exits with this when the command cannot be started at all, as a shell would. */
  static final int CANNOT_START = 127;

  private static final Logger log = LoggerFactory.getLogger("elect");
  private static final Duration RESTART_PAUSE = Duration.ofSeconds(1);

  private final List<String> command;

  /** The program alone: its arguments may carry secrets, so they stay out of the log. */
  private final String program;

  private final Duration grace;
  private final boolean restart;
  private final Spawner spawner;
  private final ScheduledExecutorService feed;
  private final CompletableFuture<Integer> finished = new CompletableFuture<>();

  /** {@code feed}: the thread that keeps each command's guard told of the term's deadline. */
  LeaderCommand(
      List<String> command,
      Duration grace,
      boolean restart,
      Spawner spawner,
      ScheduledExecutorService feed) {
    this.command = List.copyOf(command);
    this.program = Arguments.program(command);
    this.grace = grace;
    this.restart = restart;
    this.spawner = spawner;
    this.feed = feed;
  }

  /**
   * Completes with the status {@code elect} exits with: the command's, once it ended on its own.
   */
  CompletableFuture<Integer> finished() {
    return finished;
  }

  @Override
  public AutoCloseable start(Term term) {
    TermRun run = new TermRun(term);
    run.launch();
    return run::stop;
  }

  /** The command's runs during one term; more than one only with {@code --restart}. */
  private final class TermRun {
    private final Term term;
    private CommandProcess current; // guarded by this
    private boolean stopped; // guarded by this

    TermRun(Term term) {
      this.term = term;
    }

    void launch() {
      CommandProcess p;
      synchronized (this) {
        if (stopped || !term.isValid()) {
          return;
        }
        Map<String, String> env =
            Map.of(
                "BATON_ELECTION", term.election(),
                "BATON_CANDIDATE", term.candidate(),
                "BATON_FENCING_TOKEN", Long.toString(term.token().value()));
        try {
          p = CommandProcess.start(spawner, command, env, grace, term::remaining, feed);
        } catch (IOException e) {
          log.error(
              "cannot start {}: {}; releasing and exiting with status {}",
              program,
              e.getMessage(),
              CANNOT_START);
          finished.complete(CANNOT_START);
          return;
        }
        current = p;
      }
      log.info(
          "running {} with BATON_FENCING_TOKEN={} (guard pid {})", program, term.token(), p.pid());
      p.exited().thenAccept(status -> ended(p, status));
    }

    private void ended(CommandProcess p, int status) {
      synchronized (this) {
        if (stopped || p != current) {
          return; // stopped by us: the term ended
        }
        current = null;
      }
      if (p.stoppedForDeadline()) {
        // Not the command's own end: its guard stopped it at the term's deadline, elect having
        // told it of no later one (elect paused or starved). The elector sees the same deadline
        // and ends the term; or a renewal confirmed at the last moment reached the guard too late,
        // and the term goes on: then the command runs again.
        if (term.isValid()) {
          log.warn(
              "{} was stopped by its guard at the term's deadline, but a late renewal keeps the term: running it again in {}",
              program,
              Durations.format(RESTART_PAUSE));
          CompletableFuture.delayedExecutor(RESTART_PAUSE.toMillis(), TimeUnit.MILLISECONDS)
              .execute(this::launch);
        } else {
          log.warn(
              "{} was stopped by its guard: the term's deadline passed before elect could confirm a renewal to it",
              program);
        }
        return;
      }
      if (!restart) {
        log.info("{} exited with status {}; releasing the lease and exiting", program, status);
        finished.complete(status);
      } else if (term.isValid()) {
        log.info(
            "{} exited with status {}; running it again in {} (--restart)",
            program,
            status,
            RESTART_PAUSE.toMillis() + "ms");
        CompletableFuture.delayedExecutor(RESTART_PAUSE.toMillis(), TimeUnit.MILLISECONDS)
            .execute(this::launch);
      } else {
        log.info(
            "{} exited with status {}; the term is ending, it runs again when this node leads again",
            program,
            status);
      }
    }

    void stop() {
      CommandProcess p;
      synchronized (this) {
        stopped = true;
        p = current;
        current = null;
      }
      if (p == null || !p.isAlive()) {
        return;
      }
      log.info(
          "term with token {} ended: stopping {} (SIGTERM to its process group, SIGKILL after {})",
          term.token(),
          program,
          Durations.format(grace));
      long t0 = System.nanoTime();
      p.stop();
      log.info(
          "{} stopped after {}",
          program,
          Durations.format(Duration.ofNanos(System.nanoTime() - t0)));
    }
  }
}
