package dev.baton.conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;

/** Sends a signal to a test server's process with {@code kill}: Java has no SIGSTOP of its own. */
final class Signals {

  private Signals() {}

  /**
   * Sends {@code signal} (such as STOP or CONT) to {@code pid}, which {@code what} names in errors.
   */
  static void send(long pid, String signal, String what) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
              .redirectErrorStream(true)
              .start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException(
            "kill -"
                + signal
                + " "
                + pid
                + " ("
                + what
                + ") failed: "
                + new String(kill.getInputStream().readAllBytes()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kill -" + signal + " " + pid, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling " + what, e);
    }
  }
}
