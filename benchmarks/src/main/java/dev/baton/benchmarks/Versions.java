package dev.baton.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.security.CodeSource;
import java.util.Properties;

/** Versions of the libraries on the classpath, for the report. */
final class Versions {

  private Versions() {}

  /**
   * The version of {@code group:artifact}: from its jar's Maven properties, else from the manifest
   * of the jar that holds {@code type}, else from that jar's file name.
   */
  static String of(Class<?> type, String group, String artifact) {
    String path = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
    try (InputStream in = type.getClassLoader().getResourceAsStream(path)) {
      if (in != null) {
        Properties props = new Properties();
        props.load(in);
        String v = props.getProperty("version");
        if (v != null) {
          return v;
        }
      }
    } catch (IOException e) {
      // fall through to the other sources
    }
    Package p = type.getPackage();
    if (p != null && p.getImplementationVersion() != null) {
      return p.getImplementationVersion();
    }
    CodeSource source = type.getProtectionDomain().getCodeSource();
    if (source != null) {
      URL jar = source.getLocation();
      String name = jar.getPath().substring(jar.getPath().lastIndexOf('/') + 1);
      if (name.startsWith(artifact + "-") && name.endsWith(".jar")) {
        return name.substring(artifact.length() + 1, name.length() - 4);
      }
    }
    return "unknown";
  }

  /**
   * The commit the harness was built from ({@code git describe} of the working directory), marked
   * when the working tree has changes; "unknown" outside a git checkout.
   */
  static String gitCommit() {
    try {
      Process p =
          new ProcessBuilder("git", "describe", "--always", "--dirty", "--abbrev=12")
              .redirectErrorStream(true)
              .start();
      String out =
          new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
              .trim();
      if (!p.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "unknown";
      }
      return p.exitValue() == 0 && !out.isEmpty() ? "commit " + out : "unknown";
    } catch (IOException e) {
      return "unknown";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown";
    }
  }

  /** The versions of one run: servers as they answered, libraries as found on the classpath. */
  static final class Catalog {
    private final java.util.Map<String, String> entries = new java.util.LinkedHashMap<>();

    synchronized void put(String component, String version) {
      entries.put(component, version);
    }

    synchronized java.util.Map<String, String> entries() {
      return new java.util.LinkedHashMap<>(entries);
    }
  }
}
