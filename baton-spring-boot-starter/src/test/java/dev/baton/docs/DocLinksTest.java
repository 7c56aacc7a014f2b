package dev.baton.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.testservers.MarkdownPage;
import dev.baton.testservers.MarkdownPage.Link;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The README and the pages of docs/ hold together: every relative link reaches a file, and a
 * heading where it names one; every page is reachable from the README; and the version the README
 * tells a user to install is the one the build makes.
 */
class DocLinksTest {

  private static final Pattern EXTERNAL = Pattern.compile("^[a-z][a-z0-9+.-]*:");
  private static final Pattern PARENT_VERSION =
      Pattern.compile("<artifactId>baton-parent</artifactId>\\s*<version>([^<]+)</version>");

  @Test
  @DisplayName("every relative link of the README and of docs/ reaches a file, and its heading")
  void relativeLinksResolve() {
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (String page : MarkdownPage.all()) {
      for (Link link : MarkdownPage.read(page).links()) {
        if (EXTERNAL.matcher(link.target()).find()) {
          continue;
        }
        checked++;
        problem(link).ifPresent(broken::add);
      }
    }
    assertThat(checked).as("relative links checked").isGreaterThan(50);
    assertThat(broken).as("broken links").isEmpty();
  }

  @Test
  @DisplayName("every page of docs/ is reachable from the README by its links")
  void everyPageIsReachableFromTheReadme() {
    Set<String> reached = new LinkedHashSet<>();
    Deque<String> next = new ArrayDeque<>(List.of("README.md"));
    while (!next.isEmpty()) {
      String page = next.pop();
      if (!reached.add(page)) {
        continue;
      }
      for (Link link : MarkdownPage.read(page).links()) {
        String file = fileOf(link);
        if (!EXTERNAL.matcher(link.target()).find()
            && file.endsWith(".md")
            && Files.isRegularFile(MarkdownPage.repositoryRoot().resolve(file))) {
          next.push(file);
        }
      }
    }
    assertThat(reached).as("pages reached from README.md").containsAll(MarkdownPage.all());
  }

  @Test
  @DisplayName("the README names the version the build makes, for the mvn install it asks for")
  void theReadmeNamesTheBuildsVersion() throws IOException {
    Matcher version =
        PARENT_VERSION.matcher(Files.readString(MarkdownPage.repositoryRoot().resolve("pom.xml")));
    assertThat(version.find()).as("the root pom's version").isTrue();

    String readme = MarkdownPage.read("README.md").text();

    assertThat(readme)
        .contains("now `" + version.group(1) + "`")
        .contains("<baton.version>" + version.group(1) + "</baton.version>")
        .contains("mvn -B install -DskipTests");
    assertThat(MarkdownPage.read("docs/operations.md").text())
        .contains("`" + version.group(1) + "`");
  }

  /** What is wrong with a relative link, if anything. */
  private static Optional<String> problem(Link link) {
    Path root = MarkdownPage.repositoryRoot();
    String file = fileOf(link);
    String where = link.page() + " line " + link.line() + ": (" + link.target() + ")";
    Path target = root.resolve(file).normalize();
    if (!target.startsWith(root) || !Files.exists(target)) {
      return Optional.of(where + " names no file");
    }
    int hash = link.target().indexOf('#');
    if (hash >= 0 && file.endsWith(".md")) {
      String anchor = link.target().substring(hash + 1);
      if (!MarkdownPage.read(file).anchors().contains(anchor)) {
        return Optional.of(where + " names no heading of " + file);
      }
    }
    return Optional.empty();
  }

  /** The file a link names, from the repository's root: its own page for a bare #anchor. */
  private static String fileOf(Link link) {
    String target = link.target();
    int hash = target.indexOf('#');
    String path = hash >= 0 ? target.substring(0, hash) : target;
    if (path.isEmpty()) {
      return link.page();
    }
    Path page = Path.of(link.page()).getParent();
    return (page == null ? Path.of(path) : page.resolve(path)).normalize().toString();
  }
}
