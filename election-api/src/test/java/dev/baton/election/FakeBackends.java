package dev.baton.election;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Two pretend backends, {@code alpha} and {@code beta}, for testing how {@link ElectionProperties}
 * finds and chooses providers. Their stores only say who opened them.
 */
final class FakeBackends {

  static final String SERVICES = "META-INF/services/" + LeaseStoreProvider.class.getName();

  private FakeBackends() {}

  /** Needs {@code election.alpha.url}; also reads a password. */
  public static final class Alpha implements LeaseStoreProvider {
    static final String URL = "election.alpha.url";
    static final String PASSWORD = "election.alpha.password";

    @Override
    public String name() {
      return "alpha";
    }

    @Override
    public Set<String> keys() {
      return Set.of(URL, PASSWORD);
    }

    @Override
    public LeaseStore open(ElectionProperties properties) {
      return new DescribedStore("alpha at " + properties.require(URL));
    }
  }

  /** Reads only {@code election.beta.url}, and does not need it. */
  public static final class Beta implements LeaseStoreProvider {
    static final String URL = "election.beta.url";

    @Override
    public String name() {
      return "beta";
    }

    @Override
    public Set<String> keys() {
      return Set.of(URL);
    }

    @Override
    public LeaseStore open(ElectionProperties properties) {
      return new DescribedStore("beta at " + properties.get(URL).orElse("default"));
    }
  }

  /**
   * The test class loader as a deployment that holds exactly {@code providers}: {@link
   * java.util.ServiceLoader} reads a services file written to {@code dir} listing them, and no
   * other services file for {@link LeaseStoreProvider} (not even election-api's own, which lists
   * {@code memory}). Classes still load from the test class path.
   */
  static ClassLoader deploymentWith(Path dir, Class<?>... providers) throws IOException {
    Path services = dir.resolve(SERVICES);
    Files.createDirectories(services.getParent());
    Files.write(
        services, Arrays.stream(providers).map(Class::getName).collect(Collectors.toList()));
    URL listing = services.toUri().toURL();
    return new ClassLoader(FakeBackends.class.getClassLoader()) {
      @Override
      public Enumeration<URL> getResources(String name) throws IOException {
        return name.equals(SERVICES)
            ? Collections.enumeration(List.of(listing))
            : super.getResources(name);
      }
    };
  }

  /** A store that can only say which backend opened it and with what. */
  static final class DescribedStore implements LeaseStore {
    private final String description;

    DescribedStore(String description) {
      this.description = description;
    }

    @Override
    public String describe() {
      return description;
    }

    @Override
    public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
      throw new UnsupportedOperationException("only describe() is used by these tests");
    }

    @Override
    public Lease renew(Lease lease) {
      throw new UnsupportedOperationException("only describe() is used by these tests");
    }

    @Override
    public void release(Lease lease) {
      throw new UnsupportedOperationException("only describe() is used by these tests");
    }

    @Override
    public Optional<LeaseRecord> read(String election) {
      throw new UnsupportedOperationException("only describe() is used by these tests");
    }

    @Override
    public void close() {}
  }
}
