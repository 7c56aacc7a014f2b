package dev.baton.jdbc;

import java.nio.file.Path;

/**
 * The contract on an H2 file database in AUTO_SERVER mode, opened by two pools: the way several
 * processes on one machine can share H2.
 */
// No ThroughAProxy: other processes reach this database through the TCP server that AUTO_SERVER
// runs inside H2, which no proxy can stand in front of, and a second TCP server of this JVM opening
// the same file would not share its locks. H2MemoryLeaseStoreIT runs those faults on H2.
class H2FileLeaseStoreIT extends H2LeaseStoreContract {

  private final Path file = Path.of("target", "h2-it", "leases-" + suffix).toAbsolutePath();

  @Override
  String url() {
    return "jdbc:h2:file:" + file + ";AUTO_SERVER=TRUE";
  }

  @Override
  String urlOnPort(int port) {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/" + file;
  }
}
