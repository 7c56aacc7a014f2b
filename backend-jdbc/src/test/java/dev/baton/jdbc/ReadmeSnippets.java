package dev.baton.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
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
 * The code blocks of the README's first part, up to the end of the JDBC backend's section: what a
 * new user copies first, and what {@link ReadmeSnippetsTest} and {@link ReadmeExampleIT} keep true.
 */
final class ReadmeSnippets {

  /**
   * Where the part that these tests keep true ends: the sections after it have tests of their own.
   */
  static final String END_OF_PART = "\n### ZooKeeper backend";

  private static final Pattern BLOCK =
      Pattern.compile("(?m)^```(\\w+)\\n(.*?)^```$", Pattern.DOTALL);
  private static final Pattern PUBLIC_CLASS = Pattern.compile("(?m)^public class (\\w+)");

  /** One fenced block: its language, its text, and the README line it starts on. */
  record Block(String language, String text, int line) {

    /** The public class a complete source file declares; empty for a fragment. */
    Optional<String> publicClass() {
      Matcher m = PUBLIC_CLASS.matcher(text);
      return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }
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

  private ReadmeSnippets() {}

  /**
   * Compiles {@code blocks} against this test's classpath into {@code dir}/classes: a complete
   * source file as it is, a fragment with its imports on top and its statements in a method.
   *
   * @return the compiler's errors, each with the README line of its block; empty when all compiled
   */
  static String compile(List<Block> blocks, Path dir) throws IOException {
    List<Path> sources = new ArrayList<>();
    for (Block b : blocks) {
      String name = b.publicClass().orElse("ReadmeLine" + b.line());
      Path file = dir.resolve(name + ".java");
      Files.writeString(file, b.publicClass().isPresent() ? b.text() : asClass(name, b.text()));
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
                    "README block "
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

  /**
   * The README, found from the module's directory or the repository's, whichever the run started
   * in.
   */
  static Path readme() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve("README.md");
      if (Files.isRegularFile(candidate) && Files.isDirectory(dir.resolve("backend-jdbc"))) {
        return candidate;
      }
    }
    // Failsafe and surefire start in the module's directory; basedir says where that is otherwise.
    Path fromBasedir =
        Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolveSibling("README.md");
    if (Files.isRegularFile(fromBasedir)) {
      return fromBasedir;
    }
    throw new IllegalStateException("README.md not found above " + Path.of("").toAbsolutePath());
  }

  static List<Block> blocks(String language) {
    String text;
    try {
      text = Files.readString(readme());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int end = text.indexOf(END_OF_PART);
    if (end < 0) {
      throw new IllegalStateException(
          "README.md has no '" + END_OF_PART.strip() + "' heading to end the checked part at");
    }
    String part = text.substring(0, end);
    List<Block> found = new ArrayList<>();
    Matcher m = BLOCK.matcher(part);
    while (m.find()) {
      if (m.group(1).equals(language)) {
        int line = (int) part.substring(0, m.start()).chars().filter(c -> c == '\n').count() + 1;
        found.add(new Block(m.group(1), m.group(2), line));
      }
    }
    return found;
  }
}
