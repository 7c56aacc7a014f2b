package dev.baton.docs;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.testservers.MarkdownPage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import net.sourceforge.plantuml.FileFormat;
import net.sourceforge.plantuml.FileFormatOption;
import net.sourceforge.plantuml.SourceStringReader;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The pictures of docs/ are drawn from the PlantUML sources beside them ({@code name.puml} to
 * {@code name.svg}), never by hand: each picture must be the rendering of its source as it is now.
 * With {@code -Ddocs.render=true} this test renders them into docs/ instead:
 *
 * <pre>
 * mvn -B verify -pl baton-spring-boot-starter -am -Dtest=DocPicturesTest -Ddocs.render=true \
 *   -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=NONE -Dfailsafe.failIfNoSpecifiedTests=false
 * </pre>
 */
class DocPicturesTest {

  /**
   * PlantUML writes the (compressed) source it drew into the SVG: the picture says what it shows.
   */
  private static final Pattern SOURCE = Pattern.compile("<\\?plantuml-src ([^?]+)\\?>");

  @Test
  @DisplayName("every picture of docs/ is the rendering of the PlantUML source beside it")
  void picturesAreRenderedFromTheirSources() throws IOException {
    Path docs = MarkdownPage.repositoryRoot().resolve("docs");
    List<Path> sources;
    try (Stream<Path> files = Files.list(docs)) {
      sources = files.filter(p -> p.toString().endsWith(".puml")).sorted().toList();
    }
    assertThat(sources).as("PlantUML sources in docs/").isNotEmpty();

    for (Path source : sources) {
      String rendered = render(Files.readString(source));
      Path picture = docs.resolve(source.getFileName().toString().replace(".puml", ".svg"));
      if (Boolean.getBoolean("docs.render")) {
        Files.writeString(picture, rendered);
      }
      assertThat(picture).as("the picture of " + source.getFileName()).exists();
      assertThat(sourceOf(Files.readString(picture)))
          .as(
              picture.getFileName()
                  + " is drawn from "
                  + source.getFileName()
                  + " as it is now (render it with -Ddocs.render=true, see DocPicturesTest)")
          .isEqualTo(sourceOf(rendered));
    }
  }

  private static String render(String source) throws IOException {
    ByteArrayOutputStream svg = new ByteArrayOutputStream();
    new SourceStringReader(source).outputImage(svg, new FileFormatOption(FileFormat.SVG));
    String text = svg.toString(UTF_8);
    assertThat(text).as("PlantUML's rendering").doesNotContain("Syntax Error");
    return text;
  }

  private static String sourceOf(String svg) {
    Matcher m = SOURCE.matcher(svg);
    assertThat(m.find()).as("an SVG made by PlantUML, carrying its source").isTrue();
    return m.group(1);
  }
}
