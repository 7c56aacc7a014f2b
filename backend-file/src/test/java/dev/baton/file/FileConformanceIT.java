package dev.baton.file;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.InProcessFixture;
import dev.baton.conformance.LeaseStoreConformance;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * The conformance suite on one directory shared by every node, each node a store of its own on it
 * (as each {@code elect} process has): nothing is shared between nodes but the files. Faults are
 * simulated at the store: a cut node's calls fail, a blackholed node's calls hang to the timeout.
 */
class FileConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    Path directory;
    try {
      directory = Files.createTempDirectory("baton-file-conformance");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new InProcessFixture(
        node -> FileLeaseStore.builder(directory).build(), Duration.ofSeconds(1)) {
      @Override
      public List<String> refusedElectionNames() {
        return List.of("a/b", "..", ".hidden");
      }

      @Override
      public synchronized void close() {
        super.close();
        try (Stream<Path> files = Files.walk(directory)) {
          files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    };
  }
}
