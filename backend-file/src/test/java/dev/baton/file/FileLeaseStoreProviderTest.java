package dev.baton.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileLeaseStoreProviderTest {

  @TempDir Path dir;

  private static final ElectionProperties NONE = ElectionProperties.of(new Properties());

  @Test
  void it_is_found_by_name_and_opens_a_store_in_the_configured_directory() {
    try (LeaseStore store =
        NONE.with(ElectionProperties.BACKEND, "file")
            .with(FileLeaseStoreProvider.DIRECTORY, dir.toString())
            .openStore()) {
      assertThat(store).isInstanceOf(FileLeaseStore.class);
      assertThat(store.describe()).isEqualTo("file (" + dir.toAbsolutePath() + ")");
    }
  }

  @Test
  void a_call_timeout_over_half_the_renew_deadline_is_refused_naming_the_key() {
    ElectionProperties p =
        NONE.with(FileLeaseStoreProvider.DIRECTORY, dir.toString())
            .with(FileLeaseStoreProvider.CALL_TIMEOUT, "2s")
            .with(ElectionProperties.RENEW_DEADLINE, "3s");

    assertThatThrownBy(() -> new FileLeaseStoreProvider().open(p))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(FileLeaseStoreProvider.CALL_TIMEOUT)
        .hasMessageContaining("2000ms")
        .hasMessageContaining("3000ms");
  }

  @Test
  void an_unusable_directory_is_refused_naming_the_key_and_the_value() throws IOException {
    Path file = Files.writeString(dir.resolve("plain-file"), "x");
    ElectionProperties p = NONE.with(FileLeaseStoreProvider.DIRECTORY, file.toString());

    assertThatThrownBy(() -> new FileLeaseStoreProvider().open(p))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageStartingWith(FileLeaseStoreProvider.DIRECTORY + ": directory '" + file + "'");
  }
}
