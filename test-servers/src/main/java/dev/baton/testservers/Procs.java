package dev.baton.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/** Process facts from /proc and signals by pid or process group, for the process-level tests. */
public final class Procs {

  private Procs() {}

  /**
   * The state letter from /proc/PID/stat (R, S, T, Z, ...), or empty when there is no such process.
   */
  public static String state(long pid) {
    String stat = stat(pid);
    if (stat.isEmpty()) {
      return "";
    }
    // The command name in parentheses may contain spaces; the fields after it are fixed.
    return stat.substring(stat.lastIndexOf(')') + 2).split(" ")[0];
  }

  /**
   * Alive and not a zombie: a zombie holds a pid but runs nothing (this machine's init reaps
   * slowly).
   */
  public static boolean running(long pid) {
    String s = state(pid);
    return !s.isEmpty() && !s.equals("Z") && !s.equals("X");
  }

  public static boolean running(ProcessHandle p) {
    return p.isAlive() && running(p.pid());
  }

  public static long processGroup(long pid) {
    String stat = stat(pid);
    if (stat.isEmpty()) {
      return -1;
    }
    return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[2]);
  }

  /** The process groups of {@code pid} and of everything below it. */
  public static Set<Long> groupsOfTree(ProcessHandle root) {
    Set<Long> groups = new TreeSet<>();
    List<ProcessHandle> all = new ArrayList<>();
    all.add(root);
    root.descendants().forEach(all::add);
    for (ProcessHandle p : all) {
      long g = processGroup(p.pid());
      if (g > 0) {
        groups.add(g);
      }
    }
    return groups;
  }

  /**
   * Stops every process group of {@code root}'s tree, and returns them. Again until no new group
   * shows: a command that its guard had just forked can leave for a group of its own (setsid)
   * between the listing and the stop, and then ran on through a "paused machine". Once its parent
   * is stopped, nothing new can start.
   */
  public static Set<Long> stopGroupsOfTree(ProcessHandle root) {
    Set<Long> stopped = new TreeSet<>();
    Set<Long> fresh = groupsOfTree(root);
    while (!fresh.isEmpty()) {
      signalGroups("STOP", fresh);
      stopped.addAll(fresh);
      fresh = groupsOfTree(root);
      fresh.removeAll(stopped);
    }
    return stopped;
  }

  /**
   * The process groups of the commands below {@code elect}: of everything below its guards (its
   * children), less elect's own group and the guards' groups.
   */
  public static Set<Long> commandGroups(ProcessHandle elect) {
    Set<Long> groups = new TreeSet<>();
    for (ProcessHandle guard : elect.children().toList()) {
      for (ProcessHandle p : guard.descendants().toList()) {
        long g = processGroup(p.pid());
        if (g > 0) {
          groups.add(g);
        }
      }
      groups.remove(processGroup(guard.pid()));
    }
    groups.remove(processGroup(elect.pid()));
    return groups;
  }

  /** Sends {@code signal} to every process group in {@code groups}, in one kill(1). */
  public static void signalGroups(String signal, Set<Long> groups) {
    List<String> argv = new ArrayList<>(List.of("kill", "-s", signal, "--"));
    groups.forEach(g -> argv.add("-" + g));
    run(argv);
  }

  public static void signal(String signal, long pid) {
    run(List.of("kill", "-s", signal, Long.toString(pid)));
  }

  private static void run(List<String> argv) {
    try {
      Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(argv + " did not finish");
      }
      // A group that is already gone is not an error here: the test decides what it expected.
      p.getInputStream().readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static String stat(long pid) {
    try {
      return Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    } catch (NoSuchFileException e) {
      return "";
    } catch (IOException e) {
      // The process ended between the listing and the read.
      return "";
    }
  }
}
