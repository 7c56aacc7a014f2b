package dev.baton.cli;

import dev.baton.conformance.RequiredServer;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Where the chaos candidates keep their lease. {@code servedByCandidate}: the store lives inside
 * one of the {@code elect} processes (H2's AUTO_SERVER), so pausing or killing that one stalls
 * everybody and the failover bounds are looser; a store with no server inside a candidate says
 * false. The embedded default is whatever {@code elect} picks with no backend configured.
 */
record ChaosBackend(
    String label, String properties, boolean servedByCandidate, String requiredServer) {

  /** elect's embedded default, as elect itself chooses it (no backend properties at all). */
  static final ChaosBackend EMBEDDED_DEFAULT =
      new ChaosBackend("the embedded default (lease files)", "", false, "");

  static final ChaosBackend POSTGRESQL =
      new ChaosBackend(
          "PostgreSQL",
          "election.backend=jdbc\nelection.jdbc.url=jdbc:postgresql://127.0.0.1:5432/test\nelection.jdbc.username=postgres\nelection.jdbc.call-timeout=1s\n",
          false,
          "127.0.0.1:5432");

  /**
   * Every backend, or those whose {@link #slug()} contains {@code -Dchaos.backend} (for long runs
   * of one).
   */
  static Stream<ChaosBackend> all() {
    String only = System.getProperty("chaos.backend", "");
    return Stream.of(EMBEDDED_DEFAULT, POSTGRESQL)
        .filter(b -> b.slug().contains(only.toLowerCase(Locale.ROOT)));
  }

  /** Fails (in CI) or skips the test when this backend's server is not running. */
  void requireServer() {
    if (!requiredServer.isEmpty()) {
      RequiredServer.requireTcp(
          label,
          "127.0.0.1",
          Integer.parseInt(requiredServer.substring(requiredServer.indexOf(':') + 1)),
          "the PostgreSQL 15 server of the development machine (user postgres, trust, database test)");
    }
  }

  /** A short name for file names. */
  String slug() {
    return label.replaceAll("[^A-Za-z0-9]+", "-").replaceAll("^-|-$", "").toLowerCase(Locale.ROOT);
  }

  @Override
  public String toString() {
    return label;
  }
}
