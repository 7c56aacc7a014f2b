package dev.baton.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The scenarios are numbered without gaps, and the table of docs/conformance.md lists exactly those
 * numbers.
 */
class ScenarioTableTest {

  private static final Pattern NUMBER = Pattern.compile("^(\\d{2})[a-z]? ");
  private static final Pattern TABLE_ROW = Pattern.compile("^\\| (\\d{2}) \\|", Pattern.MULTILINE);

  @Test
  @DisplayName(
      "scenario numbers run from 01 without gaps, and the table of docs/conformance.md has one row for each")
  void scenarioNumbersAreContiguousAndTheDocsListThem() throws IOException {
    TreeSet<Integer> scenarios = new TreeSet<>();
    for (Class<?> c = LeaseStoreConformance.class; c != Object.class; c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        DisplayName name = m.getAnnotation(DisplayName.class);
        if (name != null) {
          Matcher n = NUMBER.matcher(name.value());
          assertThat(n.find())
              .as(
                  "the display name of %s.%s starts with a two-digit number: '%s'",
                  c.getSimpleName(), m.getName(), name.value())
              .isTrue();
          scenarios.add(Integer.parseInt(n.group(1)));
        }
      }
    }
    assertThat(scenarios)
        .as("scenario numbers")
        .containsExactlyElementsOf(IntStream.rangeClosed(1, scenarios.last()).boxed().toList());

    String suite = Files.readString(repositoryRoot().resolve("docs/conformance.md"));
    List<Integer> rows = new ArrayList<>();
    Matcher row = TABLE_ROW.matcher(suite);
    while (row.find()) {
      rows.add(Integer.parseInt(row.group(1)));
    }
    assertThat(rows)
        .as("rows of the scenario table of docs/conformance.md")
        .containsExactlyElementsOf(scenarios);
  }

  /**
   * The module's parent: surefire names the module's directory, whatever directory Maven was
   * started in.
   */
  private static Path repositoryRoot() {
    return Path.of(System.getProperty("basedir", "")).toAbsolutePath().getParent();
  }
}
