package dev.baton.cli;

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
 * backend configured at all, the embedded default: the file backend in {@code ./.baton/leases},
 * which every {@code elect} started in the same directory shares, and no candidate serves.
 */
final class ElectionConfig {

  static final String DEFAULT_NAME = "default";
  static final String JDBC_URL = "election.jdbc.url";
  static final String JDBC_CALL_TIMEOUT = "election.jdbc.call-timeout";
  static final String FILE = "file";
  static final String FILE_DIRECTORY = "election.file.directory";
  static final String FILE_CALL_TIMEOUT = "election.file.call-timeout";

  /** The file backend's own default; shorter when the renew deadline asks for it. */
  static final Duration FILE_DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(1);

  private static final Duration DEFAULT_RENEW_DEADLINE = Duration.ofSeconds(10);

  private final ElectionProperties properties;
  private final Optional<Path> embeddedDirectory;

  private ElectionConfig(ElectionProperties properties, Optional<Path> embeddedDirectory) {
    this.properties = properties;
    this.embeddedDirectory = embeddedDirectory;
  }

  /**
   * From {@code --config FILE} (with the environment overriding it), or system properties and
   * environment.
   */
  static ElectionConfig load(Optional<Path> file, Optional<String> name, Path workingDirectory) {
    ElectionProperties base =
        file.map(ElectionProperties::load).orElseGet(ElectionProperties::fromSystem);
    return resolve(base, name, workingDirectory);
  }

  static ElectionConfig resolve(
      ElectionProperties base, Optional<String> name, Path workingDirectory) {
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
      return new ElectionConfig(
          p.with(ElectionProperties.BACKEND, configured.get(0)), Optional.empty());
    }
    if (!configured.isEmpty()) {
      // Settings for several backends: the library's message lists them and asks for
      // election.backend.
      return new ElectionConfig(p, Optional.empty());
    }
    Path leases = workingDirectory.resolve(".baton").resolve("leases").toAbsolutePath().normalize();
    p = p.with(ElectionProperties.BACKEND, FILE).with(FILE_DIRECTORY, leases.toString());
    if (p.get(FILE_CALL_TIMEOUT).isEmpty()) {
      Duration half =
          p.duration(ElectionProperties.RENEW_DEADLINE, DEFAULT_RENEW_DEADLINE).dividedBy(2);
      p =
          p.with(
              FILE_CALL_TIMEOUT,
              (half.compareTo(FILE_DEFAULT_CALL_TIMEOUT) < 0 ? half : FILE_DEFAULT_CALL_TIMEOUT)
                      .toMillis()
                  + "ms");
    }
    return new ElectionConfig(p, Optional.of(leases));
  }

  /**
   * Backends on the classpath with at least one of their own keys set (in the properties or the
   * environment).
   */
  private static List<String> configuredBackends(ElectionProperties p) {
    List<String> names = new ArrayList<>();
    for (LeaseStoreProvider provider : ServiceLoader.load(LeaseStoreProvider.class)) {
      if (provider.keys().stream().anyMatch(k -> p.get(k).isPresent())
          && !names.contains(provider.name())) {
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
    return embeddedDirectory.isPresent();
  }

  /** Where the backend is, for people: the embedded default's directory, or the backend's name. */
  String describeBackend() {
    return embeddedDirectory
        .map(
            dir ->
                "lease files in "
                    + dir
                    + " (shared by every elect started in "
                    + dir.getParent().getParent()
                    + ")")
        .orElseGet(
            () ->
                properties.get(ElectionProperties.BACKEND).orElse("the backend on the classpath"));
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

  /** Opens the configured backend's store; the embedded default creates its directory. */
  LeaseStore openStore() {
    return properties.openStore();
  }
}
