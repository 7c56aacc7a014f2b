package dev.baton.jdbc;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The contract on an H2 file database in AUTO_SERVER mode, opened by two pools: the way several
 * processes on one machine can share H2.
 */
class H2FileLeaseStoreIT extends H2LeaseStoreContract {

  private final Path file = Path.of("target", "h2-it", "leases-" + suffix).toAbsolutePath();

  @Override
  String url() {
    return "jdbc:h2:file:" + file + ";AUTO_SERVER=TRUE";
  }

  /**
   * Other processes reach this database through the TCP server that AUTO_SERVER runs inside H2,
   * which no proxy can stand in front of; a second TCP server of this JVM opening the same file
   * would not share its locks.
   */
  @Override
  Optional<InetSocketAddress> tcpAddress() {
    return Optional.empty();
  }

  @Override
  String urlOnPort(int port) {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/" + file;
  }
}
