package dev.baton.testservers;

import dev.baton.testservers.MarkdownPage.Block;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
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
 * Compiles the Java blocks of the README and docs/ as a user would paste them, against the
 * classpath of the test that asks: a block that declares types is a source file as it is; one that
 * declares methods goes in a class; one of statements goes in a method of a class. Each page's
 * blocks go in a package of their own, so two pages may show a class of the same name.
 */
public final class JavaSnippets {

  private static final Pattern PUBLIC_CLASS = Pattern.compile("(?m)^public class (\\w+)");
  private static final Pattern TYPE =
      Pattern.compile("(?m)^(public |final |abstract )*(class|record|interface|enum) \\w+");
  private static final Pattern MEMBER =
      Pattern.compile("^(@\\w+.*|\\w[\\w<>?,\\[\\] ]* \\w+\\(.*)$");

  /**
   * What a page's blocks may use without declaring it, as the page's comments say it is the user's:
   * fields of the class their statements or methods go in, types of the user's own compiled beside
   * them, and what the statements' method may throw (empty: a checked exception the block does not
   * handle fails the compile).
   */
  public record Context(String fields, String types, String throwsClause) {

    /** Nothing: the blocks declare all they use. */
    public static final Context NONE = new Context("", "", "");
  }

  private JavaSnippets() {}

  /** The public class a complete source file declares; empty for a fragment. */
  public static Optional<String> publicClass(Block block) {
    Matcher m = PUBLIC_CLASS.matcher(block.text());
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /** The package the blocks of {@code page} are compiled in. */
  public static String packageOf(String page) {
    return "snippets." + page.replaceAll("[^A-Za-z0-9]", "_").toLowerCase(Locale.ROOT);
  }

  /**
   * Compiles {@code blocks}, each with its page's context, into {@code dir}/classes.
   *
   * @return the compiler's errors, each naming the page and line of its block; empty when all
   *     compiled
   */
  public static String compile(List<Block> blocks, Function<String, Context> contexts, Path dir)
      throws IOException {
    List<Path> sources = new ArrayList<>();
    Map<String, Context> pages = new LinkedHashMap<>();
    for (Block b : blocks) {
      Context context = pages.computeIfAbsent(b.page(), contexts);
      String pkg = packageOf(b.page());
      String name = publicClass(b).orElse("Line" + b.line());
      Path file =
          Files.createDirectories(dir.resolve(pkg.replace('.', '/'))).resolve(name + ".java");
      Files.writeString(file, source(pkg, name, b.text(), context));
      sources.add(file);
    }
    for (Map.Entry<String, Context> page : pages.entrySet()) {
      if (!page.getValue().types().isEmpty()) {
        String pkg = packageOf(page.getKey());
        Path file = dir.resolve(pkg.replace('.', '/')).resolve("UsersOwnTypes.java");
        Files.writeString(file, "package " + pkg + ";\n\n" + page.getValue().types());
        sources.add(file);
      }
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
                        + dir.relativize(Path.of(d.getSource().getName()))
                        + " line "
                        + d.getLineNumber()
                        + ": "
                        + d.getMessage(Locale.ROOT))
            .collect(Collectors.joining("\n"));
    return compiled || !errors.isEmpty() ? errors : "the compiler failed without an error message";
  }

  /**
   * A block as a source file: types as they are; methods in a class that holds the context's
   * fields; statements in a method of that class. Imports go on top.
   */
  private static String source(String pkg, String name, String block, Context context) {
    StringBuilder imports = new StringBuilder();
    StringBuilder body = new StringBuilder();
    for (String line : block.lines().toList()) {
      (line.startsWith("import ") ? imports : body).append(line).append('\n');
    }
    String head = "package " + pkg + ";\n\n" + imports + "\n";
    if (TYPE.matcher(body).find()) {
      return head + body;
    }
    String members =
        isMembers(body.toString())
            ? body.toString()
            : "  void run() " + context.throwsClause() + " {\n" + body + "\n  }\n";
    return head + "class " + name + " {\n" + context.fields() + "\n" + members + "}\n";
  }

  /** Whether a block's first line of code declares a method (or is an annotation on one). */
  private static boolean isMembers(String body) {
    return body.lines()
        .filter(l -> !l.isBlank() && !l.startsWith("//"))
        .findFirst()
        .map(l -> MEMBER.matcher(l).matches() && !l.contains(" = ") && !l.endsWith(";"))
        .orElse(false);
  }
}
