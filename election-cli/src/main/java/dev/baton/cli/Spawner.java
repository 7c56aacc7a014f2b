package dev.baton.cli;

import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Starts processes from one thread that lives as long as {@code elect}. The kernel sends the
 * parent-death signal ({@code setpriv --pdeathsig}) when the <em>thread</em> that started a process
 * ends, not only when its process does: a command started from a pooled thread would be killed when
 * that thread retired.
 */
final class Spawner {

  private final BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();

  Spawner() {
    Thread thread = new Thread(this::serve, "elect-spawner");
    thread.setDaemon(true);
    thread.start();
  }

  CompletableFuture<Process> start(ProcessBuilder builder) {
    CompletableFuture<Process> started = new CompletableFuture<>();
    tasks.add(
        () -> {
          try {
            started.complete(builder.start());
          } catch (IOException | RuntimeException e) {
            started.completeExceptionally(e);
          }
        });
    return started;
  }

  private void serve() {
    // This thread must never end while elect runs, or every command it started dies with it; so
    // nothing ends the loop, and an interrupt (nobody sends one) is not a reason to stop.
    while (true) {
      try {
        tasks.take().run();
      } catch (InterruptedException e) {
        Thread.interrupted();
      }
    }
  }
}
