package dev.baton.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Elector;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The README's Spring properties block, pasted as it is into application.properties, works. */
class ReadmePropertiesTest {

  private static final Pattern PROPERTIES_BLOCK =
      Pattern.compile("(?m)^```properties\\n(.*?)^```$", Pattern.DOTALL);

  @Test
  @DisplayName("the README's Spring properties block pasted into application.properties starts")
  void readmeBlockStarts(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("application.properties"), springBlock());
    ConfigurableApplicationContext c =
        new SpringApplicationBuilder(BadConfigurationTest.App.class)
            .web(WebApplicationType.NONE)
            // The block leaves the backend to the one jar on the classpath; these tests have all.
            .properties("election.backend=memory")
            .run("--spring.config.location=file:" + file);
    try {
      assertThat(c.getBean(Elector.class).election()).isEqualTo("billing-cron");
    } finally {
      c.close();
    }
  }

  /** The first properties block of the README's Spring Boot section. */
  static String springBlock() throws IOException {
    String readme = Files.readString(readme());
    int start = readme.indexOf("\n## Spring Boot");
    assertThat(start).as("README.md has a '## Spring Boot' section").isPositive();
    String section = readme.substring(start, readme.indexOf("\n## ", start + 1));
    Matcher m = PROPERTIES_BLOCK.matcher(section);
    assertThat(m.find()).as("a properties block in the README's Spring Boot section").isTrue();
    return m.group(1);
  }

  /** The README, found from the module's directory, whatever directory Maven was started in. */
  private static Path readme() {
    Path module = Path.of(System.getProperty("basedir", "")).toAbsolutePath();
    for (Path dir = module; dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("README.md"))) {
        return dir.resolve("README.md");
      }
    }
    throw new AssertionError("README.md not found above " + module);
  }
}
