package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.MemoryLeaseStore;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java and properties block a user copies from the README's first part (using it from Java,
 * configuration, the JDBC backend) works as shown: the Java compiles with its own imports against
 * the library, and the properties load into a configuration the library accepts.
 */
class ReadmeSnippetsTest {

  @Test
  @DisplayName(
      "every Java snippet of the README's first part compiles as shown, with its own imports")
  void javaSnippetsCompile(@TempDir Path dir) throws IOException {
    List<ReadmeSnippets.Block> blocks = ReadmeSnippets.blocks("java");
    // The service, the configuration line, the JDBC builder, the guarded writes, at the least.
    assertThat(blocks).hasSizeGreaterThanOrEqualTo(4);
    assertThat(blocks).anySatisfy(b -> assertThat(b.publicClass()).isPresent());

    String errors = ReadmeSnippets.compile(blocks, dir);

    assertThat(errors).as("compiler errors").isEmpty();
  }

  @Test
  @DisplayName(
      "every properties block of the README's first part loads as written and is accepted by the library")
  void propertiesBlocksLoad() throws IOException {
    List<ReadmeSnippets.Block> blocks = ReadmeSnippets.blocks("properties");
    assertThat(blocks).hasSizeGreaterThanOrEqualTo(2);
    for (ReadmeSnippets.Block b : blocks) {
      Properties p = new Properties();
      p.load(new StringReader(b.text()));
      assertThat(p.stringPropertyNames())
          .as("keys of the block at README line " + b.line())
          .isNotEmpty();
      for (String key : p.stringPropertyNames()) {
        // A .properties file has no inline comments: "jdbc   # optional" would be the value.
        assertThat(p.getProperty(key)).as(key + " at README line " + b.line()).doesNotContain("#");
      }
      ElectionProperties properties = ElectionProperties.of(p);

      Elector.builder(new MemoryLeaseStore()).configure(properties); // refuses unknown keys
      try (JdbcLeaseStore store = properties.openStore(JdbcLeaseStore.class)) {
        assertThat(store.describe()).startsWith("jdbc");
      }
    }
  }
}
