package dev.baton.jdbc;

import dev.baton.election.ElectionListener;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.ElectorBuilder;
import dev.baton.election.LeaseStore;
import dev.baton.election.Term;
import java.io.IOException;
import java.time.Duration;
import java.util.Properties;

/**
 * A replica in a JVM of its own for {@link ShutdownReleaseIT}: leads the election given on the
 * command line and prints {@code ELECTED <token>} once it does, then waits to be signalled.
 *
 * <p>Arguments: JDBC URL, user, election, candidate, and {@code default} or {@code opt-out} (the
 * latter builds the elector with {@code closeOnShutdown(false)}). It ends, without any shutdown
 * hook, when its standard input closes, so that it cannot outlive the test that started it.
 */
public final class ShutdownChild {

  private ShutdownChild() {}

  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.setProperty("election.backend", "jdbc");
    p.setProperty("election.jdbc.url", args[0]);
    p.setProperty("election.jdbc.username", args[1]);
    LeaseStore store = ElectionProperties.of(p).openStore();
    ElectorBuilder builder =
        Elector.builder(store)
            .election(args[2])
            .candidate(args[3])
            .leaseDuration(Duration.ofSeconds(30))
            .renewDeadline(Duration.ofSeconds(20))
            .retryPeriod(Duration.ofSeconds(2))
            .listener(
                new ElectionListener() {
                  @Override
                  public void onElected(Term term) {
                    System.out.println("ELECTED " + term.token().value());
                    System.out.flush();
                  }
                });
    if (args[4].equals("opt-out")) {
      builder.closeOnShutdown(false);
    }
    builder.build().start();
    try {
      while (System.in.read() >= 0) {
        // nothing to read; waiting for the end of input
      }
    } catch (IOException e) {
      // the parent is gone either way
    }
    Runtime.getRuntime().halt(3);
  }
}
