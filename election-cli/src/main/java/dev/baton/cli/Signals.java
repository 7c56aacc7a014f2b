package dev.baton.cli;

import java.util.List;
import sun.misc.Signal;

/**
 * SIGTERM and SIGINT for {@code elect run}. The JVM's own handling runs all shutdown hooks at once,
 * and the embedded database's hook (H2 closes its database in one) would race the release of the
 * lease; handling the signals first lets elect stop the command and release while the store still
 * works, and only then exit. {@code sun.misc.Signal} (module jdk.unsupported) is the JDK's only
 * way to do that; the compiler warns about it.
 */
final class Signals {

  private Signals() {}

  /** Runs {@code stop}, then exits with 128 + the signal's number, as the shell reports it. */
  static void onTermination(Runnable stop) {
    for (String name : List.of("TERM", "INT")) {
      Signal.handle(
          new Signal(name),
          signal -> {
            stop.run();
            System.exit(128 + signal.getNumber());
          });
    }
  }
}
