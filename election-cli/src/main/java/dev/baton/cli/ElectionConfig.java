package dev.baton.cli;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import dev.baton.election.MemoryLeaseStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * The library's configuration ({@code election.*} properties, {@code ELECTION_*} environment
 * variables) as {@code elect} uses it: {@code --name} overrides {@code election.name}, and with no
 * backend configured at all, the embedded default: the JDBC backend on an H2 file database under
 * {@code ./.baton/} that every {@code elect} started in the same directory shares.
 */
final class ElectionConfig {

  static final String DEFAULT_NAME = "default";
  static final String JDBC = "jdbc";
  static final String JDBC_URL = "election.jdbc.url";
  static final String JDBC_USERNAME = "election.jdbc.username";
  static final String JDBC_CALL_TIMEOUT = "election.jdbc.call-timeout";
  /** The JDBC backend's own default; shorter when the renew deadline asks for it. */
  static final Duration JDBC_DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(3);
  private static final Duration DEFAULT_RENEW_DEADLINE = Duration.ofSeconds(10);

  private final ElectionProperties properties;
  private final Optional<Path> embeddedDatabase;

  private ElectionConfig(ElectionProperties properties, Optional<Path> embeddedDatabase) {
    this.properties = properties;
    this.embeddedDatabase = embeddedDatabase;
  }

  /** From {@code --config FILE} (with the environment overriding it), or system properties and environment. */
  static ElectionConfig load(Optional<Path> file, Optional<String> name, Path workingDirectory) {
    ElectionProperties base = file.map(ElectionProperties::load).orElseGet(ElectionProperties::fromSystem);
    return resolve(base, name, workingDirectory);
  }

  static ElectionConfig resolve(ElectionProperties base, Optional<String> name, Path workingDirectory) {
    ElectionProperties p = base;
    if (name.isPresent()) {
      p = p.with(ElectionProperties.NAME, name.get());
    } else if (p.get(ElectionProperties.NAME).isEmpty()) {
      p = p.with(ElectionProperties.NAME, DEFAULT_NAME);
    }
    if (p.get(ElectionProperties.BACKEND).isPresent()) {
      return new ElectionConfig(p, Optional.empty());
    }
    List<String> configured = configuredBackends(p);
    if (configured.size() == 1) {
      // Settings for exactly one backend say which one is meant, though every backend jar is here.
      return new ElectionConfig(p.with(ElectionProperties.BACKEND, configured.get(0)), Optional.empty());
    }
    if (!configured.isEmpty()) {
      // Settings for several backends: the library's message lists them and asks for election.backend.
      return new ElectionConfig(p, Optional.empty());
    }
    Path database = workingDirectory.resolve(".baton").resolve("elect").toAbsolutePath().normalize();
    if (database.toString().contains(";")) {
      throw new ConfigurationException(
          "the embedded default keeps its database under " + database.getParent() + ", but H2 cannot open a path with ';';"
              + " run elect from another directory or set " + JDBC_URL);
    }
    // AUTO_SERVER: the first elect to open the file serves it to the others over loopback. H2
    // closes the database in a shutdown hook of its own (it refuses DB_CLOSE_ON_EXIT=FALSE with
    // AUTO_SERVER), which is why elect run releases on SIGTERM/SIGINT before the JVM shuts down.
    // WRITE_DELAY=0: H2 otherwise writes commits to the file up to 500 ms late, and a kill of the
    // elect serving it could take a confirmed grant with it (the next leader got the same token).
    p = p.with(ElectionProperties.BACKEND, JDBC)
        .with(JDBC_URL, "jdbc:h2:file:" + database + ";AUTO_SERVER=TRUE;WRITE_DELAY=0")
        .with(JDBC_USERNAME, "sa");
    if (p.get(JDBC_CALL_TIMEOUT).isEmpty()) {
      Duration renewDeadline = p.duration(ElectionProperties.RENEW_DEADLINE, DEFAULT_RENEW_DEADLINE);
      Duration half = renewDeadline.dividedBy(2);
      p = p.with(JDBC_CALL_TIMEOUT, (half.compareTo(JDBC_DEFAULT_CALL_TIMEOUT) < 0 ? half : JDBC_DEFAULT_CALL_TIMEOUT).toMillis() + "ms");
    }
    return new ElectionConfig(p, Optional.of(database));
  }

  /** Backends on the classpath with at least one of their own keys set (in the properties or the environment). */
  private static List<String> configuredBackends(ElectionProperties p) {
    List<String> names = new ArrayList<>();
    for (LeaseStoreProvider provider : ServiceLoader.load(LeaseStoreProvider.class)) {
      if (provider.keys().stream().anyMatch(k -> p.get(k).isPresent()) && !names.contains(provider.name())) {
        names.add(provider.name());
      }
    }
    return names;
  }

  ElectionProperties properties() {
    return properties;
  }

  String election() {
    return properties.require(ElectionProperties.NAME);
  }

  boolean isEmbedded() {
    return embeddedDatabase.isPresent();
  }

  /** Where the backend is, for people: the embedded database's directory, or the backend's name. */
  String describeBackend() {
    return embeddedDatabase
        .map(db -> "embedded H2 database in " + db.getParent() + " (shared by every elect started in " + db.getParent().getParent() + ")")
        .orElseGet(() -> properties.get(ElectionProperties.BACKEND).orElse("the backend on the classpath"));
  }

  /** The elector's timing as configured. */
  record Timing(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {}

  /**
   * Checks the election name and timing before anything touches the backend, on an in-memory store,
   * so that a bad value fails without a connection, a database file or a thread.
   */
  Timing checkTiming() {
    try (LeaseStore scratch = new MemoryLeaseStore()) {
      Elector e = Elector.builder(scratch).configure(properties).build();
      return new Timing(e.leaseDuration(), e.renewDeadline(), e.retryPeriod());
    }
  }

  /** Opens the configured backend's store; the embedded database is created by its first connection. */
  LeaseStore openStore() {
    return properties.openStore();
  }
}
