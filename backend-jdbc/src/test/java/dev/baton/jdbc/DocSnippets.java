package dev.baton.jdbc;

import dev.baton.testservers.MarkdownPage;
import dev.baton.testservers.MarkdownPage.Block;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * The code blocks a user of plain Java and of the JDBC backend copies: the README's (but its Spring
 * Boot section, which the starter's tests keep) and those of docs/java.md, docs/configuration.md
 * and docs/jdbc.md. {@link DocSnippetsTest} and {@link ReadmeExampleIT} keep them true.
 */
final class DocSnippets {

  /** The pages besides the README whose blocks these tests keep true. */
  static final List<String> PAGES =
      List.of("docs/java.md", "docs/configuration.md", "docs/jdbc.md");

  /** Where the README's part for the starter's tests begins. */
  static final String SPRING_SECTION = "## Five minutes in Spring Boot";

  private static final Pattern PUBLIC_CLASS = Pattern.compile("(?m)^public class (\\w+)");

  /** The public class a complete source file declares; empty for a fragment. */
  static Optional<String> publicClass(Block block) {
    Matcher m = PUBLIC_CLASS.matcher(block.text());
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /**
   * What a fragment may use without declaring it, as the README's comments say it is the user's:
   * their pool, their jOOQ context, the Term their leader work got, a store, their own data.
   */
  private static final String CONTEXT =
      "  javax.sql.DataSource dataSource;\n"
          + "  org.jooq.DSLContext dslContext;\n"
          + "  dev.baton.election.Term term;\n"
          + "  dev.baton.election.LeaseStore store;\n"
          + "  String runId;\n";

  private DocSnippets() {}

  /**
   * Compiles {@code blocks} against this test's classpath into {@code dir}/classes: a complete
   * source file as it is, a fragment with its imports on top and its statements in a method.
   *
   * @return the compiler's errors, each with the page and line of its block; empty when all
   *     compiled
   */
  static String compile(List<Block> blocks, Path dir) throws IOException {
    List<Path> sources = new ArrayList<>();
    for (Block b : blocks) {
      String name = publicClass(b).orElse(fragmentName(b));
      Path file = dir.resolve(name + ".java");
      Files.writeString(file, publicClass(b).isPresent() ? b.text() : asClass(name, b.text()));
      sources.add(file);
    }
    Path classes = Files.createDirectories(dir.resolve("classes"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    boolean compiled;
    try (StandardJavaFileManager files =
        javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
      List<String> options =
          List.of(
              "-d",
              classes.toString(),
              "-classpath",
              System.getProperty("java.class.path"),
              "-proc:none");
      compiled =
          javac
              .getTask(
                  null,
                  files,
                  diagnostics,
                  options,
                  null,
                  files.getJavaFileObjectsFromPaths(sources))
              .call();
    }
    String errors =
        diagnostics.getDiagnostics().stream()
            .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
            .map(
                d ->
                    "block "
                        + d.getSource().getName()
                        + " line "
                        + d.getLineNumber()
                        + ": "
                        + d.getMessage(Locale.ROOT))
            .collect(Collectors.joining("\n"));
    return compiled || !errors.isEmpty() ? errors : "the compiler failed without an error message";
  }

  /**
   * A fragment: its imports on top, its statements in a method of a class that holds {@link
   * #CONTEXT}.
   */
  private static String asClass(String name, String fragment) {
    StringBuilder imports = new StringBuilder();
    StringBuilder body = new StringBuilder();
    for (String line : fragment.lines().collect(Collectors.toList())) {
      (line.startsWith("import ") ? imports : body).append(line).append('\n');
    }
    // No "throws" on run(): a checked exception the snippet does not handle fails the compile.
    return imports
        + "\nclass "
        + name
        + " {\n"
        + CONTEXT
        + "\n  void run() {\n"
        + body
        + "\n  }\n}\n";
  }

  /** A fragment's class: its page and line, {@code docs_jdbc_md_L123}. */
  private static String fragmentName(Block b) {
    return b.page().replaceAll("[^A-Za-z0-9]", "_") + "_L" + b.line();
  }

  /** The README's blocks of {@code language}, up to its Spring Boot section. */
  static List<Block> readme(String language) {
    return MarkdownPage.read("README.md").without(SPRING_SECTION).blocks(language);
  }

  /**
   * The blocks of {@code language} of the README (up to its Spring Boot section) and of {@link
   * #PAGES}.
   */
  static List<Block> blocks(String language) {
    List<Block> found = new ArrayList<>(readme(language));
    for (String page : PAGES) {
      found.addAll(MarkdownPage.read(page).blocks(language));
    }
    return found;
  }
}
