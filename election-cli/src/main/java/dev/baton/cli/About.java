package dev.baton.cli;

import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStoreProvider;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What this {@code elect} is: its version, as the build wrote it into {@code
 * elect-version.properties}, the Java it runs on, and the backends found on its class path.
 */
final class About {

  private static final String VERSION_RESOURCE = "elect-version.properties";

  private About() {}

  /** The version the build filtered in; never a literal in the code. */
  static String version() {
    Properties p = new Properties();
    try (InputStream in = About.class.getResourceAsStream(VERSION_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(
            VERSION_RESOURCE + " is missing beside " + About.class.getName() + ": a broken build");
      }
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + VERSION_RESOURCE, e);
    }
    String version = p.getProperty("version", "");
    if (version.isBlank() || version.startsWith("${")) {
      throw new IllegalStateException(
          VERSION_RESOURCE + " was not filtered by the build: version=" + version);
    }
    return version;
  }

  /** {@code elect --version}: elect's version, then the Java running it. */
  static String versionText() {
    return "elect "
        + version()
        + "\nJava "
        + Runtime.version()
        + " ("
        + System.getProperty("java.vendor")
        + ", "
        + System.getProperty("java.home")
        + ")";
  }

  /** Each backend's name and its keys, in name order, as {@link ServiceLoader} finds them. */
  static Map<String, List<String>> backends() {
    Map<String, List<String>> found = new TreeMap<>();
    for (LeaseStoreProvider provider : ServiceLoader.load(LeaseStoreProvider.class)) {
      found.putIfAbsent(provider.name(), List.copyOf(new TreeSet<>(provider.keys())));
    }
    return found;
  }

  /** For {@code elect help}: every backend on the class path and the settings that choose it. */
  static String backendsText() {
    List<String> lines = new ArrayList<>();
    lines.add(
        "Backends on the class path: choose one with "
            + ElectionProperties.BACKEND
            + "=NAME, or set the keys of one only:");
    backends()
        .forEach(
            (name, keys) -> {
              String choose = ElectionProperties.BACKEND + "=" + name;
              if (name.equals(ElectionConfig.FILE)) {
                choose += " (the embedded default when no backend is configured)";
              } else if (name.equals("memory")) {
                choose += " (inside one process only: no use between elect processes)";
              }
              lines.add(String.format("  %-11s %s", name, choose));
              if (!keys.isEmpty()) {
                lines.addAll(wrap("keys: " + String.join(", ", keys), "              ", 100));
              }
            });
    return String.join("\n", lines);
  }

  private static List<String> wrap(String text, String indent, int width) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder(indent);
    for (String word : text.split(" ")) {
      if (line.length() > indent.length() && line.length() + 1 + word.length() > width) {
        lines.add(line.toString());
        line = new StringBuilder(indent);
      }
      if (line.length() > indent.length()) {
        line.append(' ');
      }
      line.append(word);
    }
    lines.add(line.toString());
    return lines;
  }
}
