package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.MemoryLeaseStore;
import dev.baton.testservers.MarkdownPage.Block;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java and properties block a user of plain Java and of the JDBC backend copies (the README
 * up to its Spring Boot section, docs/java.md, docs/configuration.md, docs/jdbc.md) works as shown:
 * the Java compiles with its own imports against the library, and the properties load into a
 * configuration the library accepts.
 */
class DocSnippetsTest {

  @Test
  @DisplayName(
      "every Java snippet of the README and of the Java, configuration and JDBC pages compiles as shown, with its own imports")
  void javaSnippetsCompile(@TempDir Path dir) throws IOException {
    List<Block> blocks = DocSnippets.blocks("java");
    // The service, the configuration line, the JDBC builder, the guarded writes, at the least.
    assertThat(blocks).hasSizeGreaterThanOrEqualTo(4);
    assertThat(blocks).anySatisfy(b -> assertThat(DocSnippets.publicClass(b)).isPresent());
    assertThat(blocks).extracting(Block::page).contains("README.md", "docs/jdbc.md");

    String errors = DocSnippets.compile(blocks, dir);

    assertThat(errors).as("compiler errors").isEmpty();
  }

  @Test
  @DisplayName(
      "every properties block of the README and of the Java, configuration and JDBC pages loads as written and is accepted by the library")
  void propertiesBlocksLoad() throws IOException {
    List<Block> blocks = DocSnippets.blocks("properties");
    assertThat(blocks).hasSizeGreaterThanOrEqualTo(2);
    for (Block b : blocks) {
      Properties p = new Properties();
      p.load(new StringReader(b.text()));
      assertThat(p.stringPropertyNames())
          .as("keys of the block at " + b.page() + " line " + b.line())
          .isNotEmpty();
      for (String key : p.stringPropertyNames()) {
        // A .properties file has no inline comments: "jdbc   # optional" would be the value.
        assertThat(p.getProperty(key))
            .as(key + " at " + b.page() + " line " + b.line())
            .doesNotContain("#");
      }
      ElectionProperties properties = ElectionProperties.of(p);

      Elector.builder(new MemoryLeaseStore()).configure(properties); // refuses unknown keys
      try (JdbcLeaseStore store = properties.openStore(JdbcLeaseStore.class)) {
        assertThat(store.describe()).startsWith("jdbc");
      }
    }
  }
}
