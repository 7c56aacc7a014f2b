package dev.baton.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One of the repository's Markdown pages (the README and {@code docs/*.md}), read the way the tests
 * that keep the documentation true need it: its fenced code blocks, its sections, its relative
 * links and the anchors its headings get. The one place that reads Markdown, so that the doc tests
 * of every module read it alike.
 *
 * <p>Only what the pages use is understood: fences of three backticks at the start of a line, ATX
 * headings ({@code ## Title}) outside fences, and inline links {@code [text](target)}.
 */
public final class MarkdownPage {

  private static final Pattern HEADING = Pattern.compile("^(#{1,6}) (.+)$");
  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
  private static final Pattern INLINE_CODE = Pattern.compile("`[^`\\n]*`");

  /** A fenced block: its language (empty without one), its text, and the page line it opens on. */
  public record Block(String page, String language, String text, int line) {}

  /** A link as written ({@code docs/jdbc.md#guarded-writes}), and the page line it is on. */
  public record Link(String page, String target, int line) {}

  private final String name;
  private final List<String> lines;
  private final int firstLine;

  private MarkdownPage(String name, List<String> lines, int firstLine) {
    this.name = name;
    this.lines = lines;
    this.firstLine = firstLine;
  }

  /**
   * A page by its path from the repository's root: {@code README.md}, {@code docs/jdbc.md}.
   *
   * @throws IllegalStateException naming the page when it does not exist
   */
  public static MarkdownPage read(String page) {
    Path file = repositoryRoot().resolve(page);
    if (!Files.isRegularFile(file)) {
      throw new IllegalStateException(page + " not found in " + repositoryRoot());
    }
    try {
      return new MarkdownPage(page, Files.readAllLines(file), 1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every page: {@code README.md}, then {@code docs/*.md} by name. */
  public static List<String> all() {
    List<String> pages = new ArrayList<>();
    pages.add("README.md");
    try (Stream<Path> docs = Files.list(repositoryRoot().resolve("docs"))) {
      docs.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".md"))
          .sorted()
          .forEach(n -> pages.add("docs/" + n));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return pages;
  }

  /**
   * The repository's root: the nearest directory above the module (surefire's and failsafe's {@code
   * basedir}, else the working directory) that holds a {@code README.md} and a {@code docs}
   * directory.
   */
  public static Path repositoryRoot() {
    Path start = Path.of(System.getProperty("basedir", "")).toAbsolutePath();
    for (Path dir = start; dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs"))) {
        return dir;
      }
    }
    throw new IllegalStateException("no README.md with a docs directory beside it above " + start);
  }

  /** The page's path from the repository's root. */
  public String name() {
    return name;
  }

  /** The page's (or section's) text. */
  public String text() {
    return String.join("\n", lines) + "\n";
  }

  /**
   * The section under the first heading that starts with {@code heading} (its hashes included,
   * {@code "## Spring Boot"}), up to the next heading of its level or higher; line numbers stay the
   * page's.
   *
   * @throws IllegalStateException naming the page and the heading when there is none
   */
  public MarkdownPage section(String heading) {
    List<Integer> headings = headingLines();
    for (int i = 0; i < headings.size(); i++) {
      String line = lines.get(headings.get(i));
      if (line.startsWith(heading)) {
        int level = level(line);
        int end = lines.size();
        for (int j = i + 1; j < headings.size(); j++) {
          if (level(lines.get(headings.get(j))) <= level) {
            end = headings.get(j);
            break;
          }
        }
        int start = headings.get(i);
        return new MarkdownPage(name, lines.subList(start, end), firstLine + start);
      }
    }
    throw new IllegalStateException(name + " has no heading '" + heading + "'");
  }

  /** This page without the section under the first heading that starts with {@code heading}. */
  public MarkdownPage without(String heading) {
    MarkdownPage cut = section(heading);
    int from = cut.firstLine - firstLine;
    List<String> rest = new ArrayList<>(lines.subList(0, from));
    // Blank lines keep the line numbers of what follows the page's.
    cut.lines.forEach(l -> rest.add(""));
    rest.addAll(lines.subList(from + cut.lines.size(), lines.size()));
    return new MarkdownPage(name, rest, firstLine);
  }

  /** The fenced blocks of {@code language} ({@code "java"}, {@code "properties"}), in order. */
  public List<Block> blocks(String language) {
    List<Block> found = new ArrayList<>();
    String open = null;
    int openedAt = 0;
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (!line.startsWith("```")) {
        if (open != null) {
          text.append(line).append('\n');
        }
      } else if (open == null) {
        open = line.substring(3).strip();
        openedAt = firstLine + i;
        text.setLength(0);
      } else {
        if (open.equals(language)) {
          found.add(new Block(name, open, text.toString(), openedAt));
        }
        open = null;
      }
    }
    return found;
  }

  /** Every inline link outside code, in order; its text may run over several lines. */
  public List<Link> links() {
    // The page with fenced blocks blanked and inline code emptied, line for line.
    String[] prose = new String[lines.size()];
    Arrays.fill(prose, "");
    for (int i : outsideFences()) {
      prose[i] = INLINE_CODE.matcher(lines.get(i)).replaceAll("``");
    }
    String text = String.join("\n", prose);
    List<Link> found = new ArrayList<>();
    Matcher m = LINK.matcher(text);
    while (m.find()) {
      int line = (int) text.substring(0, m.start(1)).chars().filter(c -> c == '\n').count();
      found.add(new Link(name, m.group(1), firstLine + line));
    }
    return found;
  }

  /**
   * The anchors the page's headings get, as GitHub makes them: lower case, punctuation other than
   * {@code -} and {@code _} dropped, spaces made {@code -}, and {@code -1}, {@code -2} after a
   * repeated one.
   */
  public Set<String> anchors() {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (int i : headingLines()) {
      String slug = slug(headingText(lines.get(i)));
      int n = seen.merge(slug, 1, Integer::sum) - 1;
      anchors.add(n == 0 ? slug : slug + "-" + n);
    }
    return anchors;
  }

  /** The anchor GitHub gives a heading's text. */
  public static String slug(String heading) {
    StringBuilder slug = new StringBuilder();
    heading
        .strip()
        .toLowerCase(Locale.ROOT)
        .codePoints()
        .forEach(
            c -> {
              if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                slug.appendCodePoint(c);
              } else if (c == ' ') {
                slug.append('-');
              }
            });
    return slug.toString();
  }

  private static String headingText(String line) {
    Matcher m = HEADING.matcher(line);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a heading: " + line);
    }
    return m.group(2);
  }

  private List<Integer> headingLines() {
    return outsideFences().stream().filter(i -> HEADING.matcher(lines.get(i)).matches()).toList();
  }

  /** The indexes of the lines that are neither in a fenced block nor one of its fences. */
  private List<Integer> outsideFences() {
    List<Integer> found = new ArrayList<>();
    boolean fenced = false;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("```")) {
        fenced = !fenced;
      } else if (!fenced) {
        found.add(i);
      }
    }
    return found;
  }

  private static int level(String heading) {
    return heading.indexOf(' ');
  }
}
