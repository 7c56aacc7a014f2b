package dev.baton.cli;

import java.util.List;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGTERM, SIGINT and SIGHUP for {@code elect run}: each makes it step down in order. A hangup is a
 * terminal or SSH session going away; an {@code elect} that was not started to outlive it (under
 * {@code nohup} SIGHUP starts ignored, and stays so) ends with it as on SIGTERM: the command gets
 * its grace, the lease is released. The JVM's own handling runs all shutdown hooks at once, and the
 * embedded database's hook (H2 closes its database in one) would race the release of the lease;
 * handling the signals first lets elect stop the command and release while the store still works,
 * and only then exit. {@code sun.misc.Signal} (module jdk.unsupported) is the JDK's only way to do
 * that; the compiler warns about it.
 */
final class Signals {

  private Signals() {}

  /** Runs {@code stop}, then exits with 128 + the signal's number, as the shell reports it. */
  static void onTermination(Runnable stop) {
    SignalHandler handler =
        signal -> {
          stop.run();
          System.exit(128 + signal.getNumber());
        };
    for (String name : List.of("TERM", "INT", "HUP")) {
      Signal signal = new Signal(name);
      try {
        if (Signal.handle(signal, handler) == SignalHandler.SIG_IGN) {
          // Started with it ignored (a background job of a script, say): it stays ignored.
          Signal.handle(signal, SignalHandler.SIG_IGN);
        }
      } catch (IllegalArgumentException e) {
        // The JVM keeps this signal to itself (-Xrs and the like): the shutdown hook still stops
        // the command and releases, racing the embedded database's own hook.
      }
    }
  }
}
