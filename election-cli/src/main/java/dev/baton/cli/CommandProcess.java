package dev.baton.cli;

import dev.baton.election.ElectionProperties;
import dev.baton.election.UrlSecrets;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One run of the leader's command, in a process group of its own under a small guard (a bash
 * script, {@code guard.sh}) that {@code setpriv} arms with a parent-death signal, in a session of
 * its own, apart from {@code elect}'s process group and terminal. The guard stops the whole group:
 * on request with SIGTERM and SIGKILL after the grace period; at once with SIGKILL when {@code
 * elect} dies, however it dies; and on its own, SIGTERM then SIGKILL, when the term's deadline
 * passes before {@code elect} told it of a later one (a dead-man's switch for an {@code elect} that
 * is alive but frozen). {@code elect} tells it the deadline on the guard's standard input, as an
 * absolute time on the clock they share ({@link Uptime}).
 */
final class CommandProcess {

  /**
   * Programs the guard needs; from util-linux, coreutils and bash, present on every common Linux.
   */
  static final List<String> TOOLS = List.of("bash", "setsid", "setpriv", "env");

  private static final String GUARD = readGuard();

  /**
   * How often elect looks whether the term's deadline moved, and tells the guard. The guard's view
   * lags by at most this, which only makes it stricter; a renewal confirmed within this of the
   * deadline may reach it too late, and the command is stopped and started again in the same term.
   */
  static final Duration FEED_PERIOD = Duration.ofMillis(25);

  private final Process guard;
  private final Duration grace;
  private final Supplier<Duration> validFor;
  private final CompletableFuture<Integer> exited;
  private volatile boolean stoppedForDeadline;
  private long
      toldDeadline; // guarded by this; hundredths of a second on Uptime's clock, 0 before the first

  private CommandProcess(Process guard, Duration grace, Supplier<Duration> validFor, Path verdict) {
    this.guard = guard;
    this.grace = grace;
    this.validFor = validFor;
    this.exited =
        guard
            .onExit()
            .thenApply(
                g -> {
                  stoppedForDeadline = readVerdict(verdict);
                  return g.exitValue();
                });
  }

  /**
   * Starts {@code command} with {@code environment} added to elect's own, its output and input
   * passed through, and keeps its guard told, from {@code feed}, how long the term stays valid
   * ({@code validFor}: zero once it is not).
   */
  static CommandProcess start(
      Spawner spawner,
      List<String> command,
      Map<String, String> environment,
      Duration grace,
      Supplier<Duration> validFor,
      ScheduledExecutorService feed)
      throws IOException {
    // The guard gets a session (and so a process group) of its own: what is sent to elect's
    // group (Ctrl-Z, kill -STOP -PGID, a terminal's hangup or Ctrl-C) must not reach the one
    // process that stops the command when elect cannot. Spawned from elect, it is no group
    // leader, so setsid(1) does not fork: the guard stays elect's child, with its parent-death
    // signal. A signal ignored when bash starts cannot be trapped, and an ignored signal is
    // inherited through fork and exec: under nohup (SIGHUP ignored) the guard would never hear
    // of elect's death and the command would outlive it. env restores the guard's two signals.
    List<String> argv =
        new ArrayList<>(
            List.of(
                "setpriv",
                "--pdeathsig",
                "HUP",
                "--",
                "setsid",
                "--",
                "env",
                "--default-signal=HUP,TERM",
                "bash",
                "-c",
                GUARD,
                "elect-guard"));
    argv.add(Long.toString(ProcessHandle.current().pid()));
    argv.add(Long.toString(grace.toMillis()));
    // Owner-only, like every temporary file Java creates here; the guard writes 'deadline' into it
    // when it stops the command for its deadline, and removes it if elect died.
    Path verdict = Files.createTempFile("elect-guard-", ".verdict");
    argv.add(verdict.toString());
    argv.addAll(command);
    // The guard's standard input is the pipe for its deadlines; it hands the command elect's own.
    ProcessBuilder builder =
        new ProcessBuilder(argv).inheritIO().redirectInput(ProcessBuilder.Redirect.PIPE);
    Map<String, String> env = commandEnvironment(builder.environment(), environment);
    builder.environment().clear();
    builder.environment().putAll(env);
    Process guard;
    try {
      guard = spawner.start(builder).get(30, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException | InterruptedException e) {
      Files.deleteIfExists(verdict);
      throw cannotStart(command, e);
    }
    CommandProcess p = new CommandProcess(guard, grace, validFor, verdict);
    // The guard starts the command only once it knows a deadline.
    p.tellDeadline();
    ScheduledFuture<?> feeding =
        feed.scheduleAtFixedRate(
            p::tellDeadline, FEED_PERIOD.toMillis(), FEED_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    p.exited.whenComplete((status, e) -> feeding.cancel(false));
    return p;
  }

  private static IOException cannotStart(List<String> command, Exception e) {
    if (e instanceof ExecutionException && e.getCause() instanceof IOException io) {
      return io;
    }
    if (e instanceof TimeoutException) {
      return new IOException("starting " + Arguments.program(command) + " took more than 30s", e);
    }
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return new IOException("interrupted while starting " + Arguments.program(command), e);
    }
    return new IOException(
        "cannot start " + Arguments.program(command) + ": " + e.getCause(), e.getCause());
  }

  /** Whether the guard said it stopped the command for its deadline; the file goes either way. */
  private static boolean readVerdict(Path verdict) {
    try {
      boolean deadline =
          Files.exists(verdict) && Files.readString(verdict).trim().equals("deadline");
      Files.deleteIfExists(verdict);
      return deadline;
    } catch (IOException e) {
      // Unreadable: take it as the command's own end, as before there was a switch.
      return false;
    }
  }

  /**
   * Tells the guard until when the term is valid, if that is later than what it was told. The clock
   * is read before the term's remaining time, so that a stall between the two can only make the
   * deadline earlier. A shorter one is never sent: the end of a term is elect's to act on (SIGTERM
   * to the guard), and the guard's own stop is for when elect cannot act.
   */
  synchronized void tellDeadline() {
    if (!guard.isAlive()) {
      return;
    }
    long now = Uptime.hundredths();
    long deadline = now + validFor.get().toMillis() / 10;
    // The clock's hundredths and the remaining millis round apart: a move by one is noise.
    if (deadline <= toldDeadline + 1) {
      return;
    }
    try {
      OutputStream out = guard.getOutputStream();
      out.write((deadline + "\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      toldDeadline = deadline;
    } catch (IOException e) {
      // The guard is gone (a broken pipe); exited() tells the rest.
    }
  }

  /**
   * True when the guard stopped the command on its own because the term's deadline passed before
   * elect told it of a later one; meaningful once {@link #exited()} completed.
   */
  boolean stoppedForDeadline() {
    return stoppedForDeadline;
  }

  /**
   * elect's environment for the command, without elect's own secrets (ELECTION_* variables that
   * hold passwords, tokens or keys, and URLs that carry a password: left out whole, since a URL
   * with its password hidden would only fail later), with {@code added} on top. A command that
   * needs the database gets its credentials its own way (its own variables, a .pgpass file).
   */
  static Map<String, String> commandEnvironment(
      Map<String, String> inherited, Map<String, String> added) {
    Map<String, String> env = new TreeMap<>(inherited);
    env.entrySet()
        .removeIf(
            e ->
                e.getKey().startsWith("ELECTION_")
                    && (ElectionProperties.isSecret(e.getKey())
                        || UrlSecrets.carriesSecret(e.getValue())));
    env.putAll(added);
    return env;
  }

  /** The guard's pid; the command's is its only child. */
  long pid() {
    return guard.pid();
  }

  /**
   * Completes with the command's exit status (128 + n when a signal ended it) when it and its group
   * are gone.
   */
  CompletableFuture<Integer> exited() {
    return exited;
  }

  boolean isAlive() {
    return guard.isAlive();
  }

  /**
   * Stops the command's process group: SIGTERM, then SIGKILL once the grace period is over; returns
   * when it is gone. When the guard cannot do it (it was itself killed), kills the tree from here.
   */
  void stop() {
    if (!guard.isAlive()) {
      return;
    }
    guard.destroy();
    if (awaitExit(grace.plusSeconds(2))) {
      return;
    }
    List<ProcessHandle> tree = guard.descendants().toList();
    tree.forEach(ProcessHandle::destroyForcibly);
    guard.destroyForcibly();
    awaitExit(Duration.ofSeconds(2));
  }

  private boolean awaitExit(Duration timeout) {
    try {
      return guard.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !guard.isAlive();
    }
  }

  private static String readGuard() {
    try (InputStream in = CommandProcess.class.getResourceAsStream("guard.sh")) {
      if (in == null) {
        throw new IllegalStateException("guard.sh is missing from elect's jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read guard.sh from elect's jar", e);
    }
  }
}
