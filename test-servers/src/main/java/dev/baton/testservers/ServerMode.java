package dev.baton.testservers;

import dev.baton.conformance.RequiredServer;
import java.util.Locale;

/**
 * Where the tests' servers run, chosen by the system property {@value #PROPERTY}: {@code local}
 * (the default: the machine's own PostgreSQL and MariaDB, etcd and ZooKeeper started as processes
 * or in this JVM) or {@code containers} (every server in a container of its own, started with
 * Testcontainers from the image its {@code baton.image.*} property names).
 */
public enum ServerMode {
  LOCAL,
  CONTAINERS;

  public static final String PROPERTY = "baton.servers";

  /**
   * The mode the property chooses; an unknown value fails, naming the property and what it accepts.
   */
  public static ServerMode current() {
    String value = System.getProperty(PROPERTY, "local").trim().toLowerCase(Locale.ROOT);
    return switch (value) {
      case "local", "" -> LOCAL;
      case "containers" -> CONTAINERS;
      default ->
          throw new IllegalArgumentException(
              PROPERTY
                  + "="
                  + System.getProperty(PROPERTY)
                  + " is not a server mode; use local or containers");
    };
  }

  public static boolean containers() {
    return current() == CONTAINERS;
  }

  /**
   * For tests that only mean something with servers in containers (they pause or pick images):
   * without container mode they fail with CI=true, like any missing server, and are skipped
   * elsewhere with how to run them.
   */
  public static void requireContainers() {
    RequiredServer.require(
        containers(),
        "a server in a container (-D" + PROPERTY + "=containers)",
        "scripts/docker-engine start, then run this test with -D" + PROPERTY + "=containers");
  }
}
