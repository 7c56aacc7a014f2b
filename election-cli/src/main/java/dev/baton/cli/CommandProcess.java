package dev.baton.cli;

import dev.baton.election.ElectionProperties;
import dev.baton.election.UrlSecrets;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One run of the leader's command, in a process group of its own under a small guard (a bash
 * script, {@code guard.sh}) that {@code setpriv} arms with a parent-death signal. The guard
 * stops the whole group: on request with SIGTERM and SIGKILL after the grace period, and at once
 * with SIGKILL when {@code elect} dies, however it dies.
 */
final class CommandProcess {

  /** Programs the guard needs; from util-linux, coreutils and bash, present on every common Linux. */
  static final List<String> TOOLS = List.of("bash", "setsid", "setpriv", "env");

  private static final String GUARD = readGuard();

  private final Process guard;
  private final Duration grace;
  private final CompletableFuture<Integer> exited;

  private CommandProcess(Process guard, Duration grace) {
    this.guard = guard;
    this.grace = grace;
    this.exited = guard.onExit().thenApply(Process::exitValue);
  }

  /**
   * Starts {@code command} with {@code environment} added to elect's own, its output and input
   * passed through.
   */
  static CommandProcess start(Spawner spawner, List<String> command, Map<String, String> environment, Duration grace)
      throws IOException {
    // A signal ignored when bash starts cannot be trapped, and an ignored signal is inherited
    // through fork and exec: under nohup (SIGHUP ignored) the guard would never hear of elect's
    // death and the command would outlive it. env restores the guard's two signals first.
    List<String> argv =
        new ArrayList<>(List.of("setpriv", "--pdeathsig", "HUP", "--", "env", "--default-signal=HUP,TERM", "bash", "-c", GUARD, "elect-guard"));
    argv.add(Long.toString(ProcessHandle.current().pid()));
    argv.add(Long.toString(grace.toMillis()));
    argv.addAll(command);
    ProcessBuilder builder = new ProcessBuilder(argv).inheritIO();
    Map<String, String> env = commandEnvironment(builder.environment(), environment);
    builder.environment().clear();
    builder.environment().putAll(env);
    try {
      return new CommandProcess(spawner.start(builder).get(30, TimeUnit.SECONDS), grace);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException) {
        throw (IOException) e.getCause();
      }
      throw new IOException("cannot start " + Arguments.program(command) + ": " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("starting " + Arguments.program(command) + " took more than 30s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting " + Arguments.program(command), e);
    }
  }

  /**
   * elect's environment for the command, without elect's own secrets (ELECTION_* variables that
   * hold passwords, tokens or keys, and URLs that carry a password: left out whole, since a URL with
   * its password hidden would only fail later), with {@code added} on top. A command that needs the
   * database gets its credentials its own way (its own variables, a .pgpass file).
   */
  static Map<String, String> commandEnvironment(Map<String, String> inherited, Map<String, String> added) {
    Map<String, String> env = new TreeMap<>(inherited);
    env.entrySet()
        .removeIf(e -> e.getKey().startsWith("ELECTION_")
            && (ElectionProperties.isSecret(e.getKey()) || e.getKey().endsWith("_KEY") || UrlSecrets.carriesSecret(e.getValue())));
    env.putAll(added);
    return env;
  }

  /** The guard's pid; the command's is its only child. */
  long pid() {
    return guard.pid();
  }

  /** Completes with the command's exit status (128 + n when a signal ended it) when it and its group are gone. */
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
