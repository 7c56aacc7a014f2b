package dev.baton.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Elector;
import dev.baton.testservers.MarkdownPage;
import dev.baton.testservers.MarkdownPage.Block;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The Spring properties blocks of the README's five-minute start and of docs/spring-boot.md, each
 * pasted as it is into application.properties, start an application.
 */
class DocPropertiesTest {

  @Test
  @DisplayName("the README's Spring properties block pasted into application.properties starts")
  void readmeBlockStarts(@TempDir Path dir) throws IOException {
    List<Block> blocks =
        MarkdownPage.read("README.md")
            .section("## Five minutes in Spring Boot")
            .blocks("properties");
    assertThat(blocks).as("properties blocks of the README's Spring Boot section").hasSize(1);

    assertStarts(blocks.get(0), dir);
  }

  @Test
  @DisplayName(
      "every properties block of docs/spring-boot.md pasted into application.properties starts")
  void springPageBlocksStart(@TempDir Path dir) throws IOException {
    List<Block> blocks = MarkdownPage.read("docs/spring-boot.md").blocks("properties");
    assertThat(blocks).as("properties blocks of docs/spring-boot.md").isNotEmpty();

    for (Block block : blocks) {
      assertStarts(block, dir);
    }
  }

  private static void assertStarts(Block block, Path dir) throws IOException {
    Path file =
        Files.writeString(dir.resolve("application-" + block.line() + ".properties"), block.text());
    ConfigurableApplicationContext c =
        new SpringApplicationBuilder(BadConfigurationTest.App.class)
            .web(WebApplicationType.NONE)
            // The blocks leave the backend to the one jar on the classpath; these tests have all.
            .properties("election.backend=memory")
            .run("--spring.config.location=file:" + file);
    try {
      assertThat(c.getBean(Elector.class).election())
          .as("the election of the block at " + block.page() + " line " + block.line())
          .isEqualTo("billing-cron");
    } finally {
      c.close();
    }
  }
}
