package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Configuration for an election and its backend, bound once from {@link Properties} with
 * environment variables overriding them: {@code ELECTION_RENEW_DEADLINE} overrides {@code
 * election.renew-deadline}, {@code ELECTION_JDBC_URL} overrides {@code election.jdbc.url}.
 *
 * <p>Immutable. Values are read and checked by the typed getters, which fail with a {@link
 * ConfigurationException} naming the key, the value and what is accepted. Values of keys that name
 * secrets (passwords, tokens) never appear in messages.
 *
 * <p>Core keys: {@code election.backend}, {@code election.name}, {@code election.candidate-id},
 * {@code election.lease-duration}, {@code election.renew-deadline}, {@code election.retry-period}.
 * Each backend adds its own under {@code election.<backend>.}.
 */
public final class ElectionProperties {

  public static final String PREFIX = "election.";
  public static final String BACKEND = "election.backend";
  public static final String NAME = "election.name";
  public static final String CANDIDATE_ID = "election.candidate-id";
  public static final String LEASE_DURATION = "election.lease-duration";
  public static final String RENEW_DEADLINE = "election.renew-deadline";
  public static final String RETRY_PERIOD = "election.retry-period";

  static final Set<String> CORE_KEYS =
      Set.of(BACKEND, NAME, CANDIDATE_ID, LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD);

  private static final Logger log = LoggerFactory.getLogger(ElectionProperties.class);

  private final Map<String, String> values;
  private final Map<String, String> environment;

  /**
   * Keys whose prefix is a near miss of {@code election.}: refused by the key check, never read.
   */
  private final Set<String> misspelt;

  private ElectionProperties(
      Map<String, String> values, Map<String, String> environment, Set<String> misspelt) {
    this.values = Collections.unmodifiableMap(new TreeMap<>(values));
    this.environment = Collections.unmodifiableMap(new TreeMap<>(environment));
    this.misspelt = Collections.unmodifiableSet(new TreeSet<>(misspelt));
  }

  /** Properties alone, without environment overrides (tests, embedded use). */
  public static ElectionProperties of(Properties properties) {
    return of(properties, Map.of());
  }

  /** Properties with overrides from {@code environment} (only its {@code ELECTION_*} entries). */
  public static ElectionProperties of(Properties properties, Map<String, String> environment) {
    requireNonNull(properties, "properties");
    requireNonNull(environment, "environment");
    Map<String, String> values = new TreeMap<>();
    Set<String> misspelt = new TreeSet<>();
    for (String key : properties.stringPropertyNames()) {
      if (key.startsWith(PREFIX)) {
        values.put(key, properties.getProperty(key).trim());
      } else if (UnknownKeys.looksMisspelt(key)) {
        misspelt.add(key);
      }
    }
    Map<String, String> env = new TreeMap<>();
    environment.forEach(
        (k, v) -> {
          if (k.startsWith("ELECTION_")) {
            env.put(k, v.trim());
          }
        });
    return new ElectionProperties(values, env, misspelt);
  }

  /** Reads a properties file, with this process's environment overriding it. */
  public static ElectionProperties load(Path file) {
    requireNonNull(file, "file");
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file)) {
      properties.load(reader);
    } catch (NoSuchFileException e) {
      throw new ConfigurationException("configuration file " + file + " does not exist");
    } catch (IOException | IllegalArgumentException e) {
      throw new ConfigurationException(
          "cannot read configuration file " + file + ": " + e.getMessage(), e);
    }
    return of(properties, System.getenv());
  }

  /** This process's system properties, with its environment overriding them. */
  public static ElectionProperties fromSystem() {
    return of(System.getProperties(), System.getenv());
  }

  /** The same configuration with {@code key} set to {@code value} (an explicit override). */
  public ElectionProperties with(String key, String value) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    Map<String, String> copy = new TreeMap<>(values);
    copy.put(key, value.trim());
    Map<String, String> env = new TreeMap<>(environment);
    env.remove(environmentName(key));
    return new ElectionProperties(copy, env, misspelt);
  }

  /**
   * The environment variable that overrides {@code key}: {@code election.jdbc.url} → {@code
   * ELECTION_JDBC_URL}.
   */
  public static String environmentName(String key) {
    return key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  /**
   * True for keys whose values must never be printed nor passed on, in every spelling: the dotted
   * key ({@code election.zookeeper.digest}) and its environment variable ({@code
   * ELECTION_ZOOKEEPER_DIGEST}) are one key to this rule, whatever the case and separators.
   */
  public static boolean isSecret(String key) {
    // One spelling for the rule: an environment name maps '.' and '-' to '_', so the words of a
    // key are what is left between any of the three.
    String k = key.toLowerCase(Locale.ROOT).replace('_', '.').replace('-', '.');
    return k.contains("password")
        || k.contains("token")
        || k.contains("secret")
        || k.endsWith(".key")
        || k.endsWith(".digest")
        || k.contains("credential")
        || k.contains("connection.string");
  }

  /**
   * The value as it may be shown in a message: secrets are hidden, and so are passwords in URLs.
   */
  public static String shown(String key, String value) {
    return isSecret(key) ? "<hidden>" : "'" + UrlSecrets.redact(value) + "'";
  }

  public Optional<String> get(String key) {
    String fromEnv = environment.get(environmentName(key));
    if (fromEnv != null && !fromEnv.isEmpty()) {
      return Optional.of(fromEnv);
    }
    String value = values.get(key);
    return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
  }

  public String require(String key) {
    return get(key)
        .orElseThrow(
            () ->
                new ConfigurationException(
                    key
                        + " is required but not set (set it in the properties or as "
                        + environmentName(key)
                        + ")"));
  }

  /**
   * Reads a duration as configuration writes it ({@code 500ms}, {@code 15s}, {@code 2m}, {@code
   * 1h}, or ISO-8601 {@code PT15S}), for tools that take durations elsewhere, such as command-line
   * arguments; the error names {@code key} and the value.
   */
  public static Duration parseDuration(String key, String value) {
    return Durations.parse(requireNonNull(key, "key"), requireNonNull(value, "value"));
  }

  public Optional<Duration> duration(String key) {
    return get(key).map(v -> Durations.parse(key, v));
  }

  public Duration duration(String key, Duration otherwise) {
    return duration(key).orElse(otherwise);
  }

  public boolean bool(String key, boolean otherwise) {
    Optional<String> value = get(key);
    if (value.isEmpty()) {
      return otherwise;
    }
    switch (value.get().toLowerCase(Locale.ROOT)) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new ConfigurationException(
            key + ": " + shown(key, value.get()) + " is not a boolean; use true or false");
    }
  }

  public int integer(String key, int otherwise, int min, int max) {
    Optional<String> value = get(key);
    if (value.isEmpty()) {
      return otherwise;
    }
    try {
      int n = Integer.parseInt(value.get());
      if (n < min || n > max) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new ConfigurationException(
          key
              + ": "
              + shown(key, value.get())
              + " is not a whole number from "
              + min
              + " to "
              + max);
    }
  }

  /** Every {@code election.*} key set in the properties (not the environment). */
  public Set<String> keys() {
    return values.keySet();
  }

  /**
   * Opens the configured backend's store: {@code election.backend} when set, otherwise the only
   * backend jar on the classpath. The in-memory store ({@code memory}) is chosen only by name. Keys
   * that no backend or the core reads are refused as likely typos.
   */
  public LeaseStore openStore() {
    return openStore(Thread.currentThread().getContextClassLoader());
  }

  /**
   * {@link #openStore()} typed as the backend's own store, for what only that backend offers (the
   * JDBC store's guarded writes): {@code openStore(JdbcLeaseStore.class)}. Fails, without leaving a
   * store open, when the configured backend opens another kind of store.
   */
  public <S extends LeaseStore> S openStore(Class<S> type) {
    requireNonNull(type, "type");
    Map<String, LeaseStoreProvider> found =
        providers(Thread.currentThread().getContextClassLoader());
    LeaseStoreProvider provider = chooseProvider(found);
    LeaseStore store = open(provider, found);
    if (type.isInstance(store)) {
      return type.cast(store);
    }
    store.close();
    throw new ConfigurationException(
        BACKEND
            + ": the code needs a store of type "
            + type.getSimpleName()
            + ", but backend '"
            + provider.name()
            + "' opens one of type "
            + store.getClass().getSimpleName()
            + "; configure the backend the code was written for, or use openStore() and the LeaseStore interface");
  }

  LeaseStore openStore(ClassLoader loader) {
    // One lookup serves both the choice and the key check, so "another backend that is present"
    // means present in this loader, not in whichever loader defined the chosen provider.
    Map<String, LeaseStoreProvider> found = providers(loader);
    return open(chooseProvider(found), found);
  }

  private LeaseStore open(LeaseStoreProvider provider, Map<String, LeaseStoreProvider> found) {
    checkKeys(provider, found);
    return provider.open(this);
  }

  /**
   * For {@code ElectorBuilder.configure}, which is given a store and so does not know its backend:
   * refuses the keys that neither the core nor any backend on the classpath reads, and keys with a
   * misspelt prefix, as {@link #openStore()} does.
   */
  void checkKeys() {
    Map<String, LeaseStoreProvider> found =
        providers(Thread.currentThread().getContextClassLoader());
    Set<String> known = known(found);
    List<String> unknown =
        values.keySet().stream().filter(k -> !known.contains(k)).collect(Collectors.toList());
    UnknownKeys.refuse(
        unknown,
        misspelt,
        known,
        "accepted: "
            + String.join(", ", CORE_KEYS.stream().sorted().collect(Collectors.toList()))
            + " and the keys of the backends on the classpath ("
            + String.join(", ", found.keySet())
            + ")");
  }

  /**
   * Every key Baton reads with the backends on the classpath: the core keys and each backend's. For
   * code that resolves configuration on its own terms and hands the result to {@link
   * #of(Properties, Map)}, as the Spring Boot starter does with Spring's {@code Environment}, and
   * for tools that describe the keys.
   */
  public static Set<String> knownKeys() {
    return Collections.unmodifiableSet(
        known(providers(Thread.currentThread().getContextClassLoader())));
  }

  private static Set<String> known(Map<String, LeaseStoreProvider> found) {
    Set<String> known = new TreeSet<>(CORE_KEYS);
    found.values().forEach(p -> known.addAll(p.keys()));
    return known;
  }

  /** The backend that {@link #openStore()} would open, without opening it. */
  public String backendName() {
    return chooseProvider(providers(Thread.currentThread().getContextClassLoader())).name();
  }

  private LeaseStoreProvider chooseProvider(Map<String, LeaseStoreProvider> found) {
    Optional<String> chosen = get(BACKEND);
    if (chosen.isPresent()) {
      LeaseStoreProvider provider = found.get(chosen.get());
      if (provider == null) {
        throw new ConfigurationException(
            BACKEND
                + ": unknown backend '"
                + chosen.get()
                + "'; found on the classpath: "
                + String.join(", ", found.keySet()));
      }
      return provider;
    }
    List<String> candidates =
        found.keySet().stream()
            .filter(n -> !n.equals(MemoryLeaseStoreProvider.NAME))
            .collect(Collectors.toList());
    if (candidates.size() == 1) {
      return found.get(candidates.get(0));
    }
    if (candidates.isEmpty()) {
      throw new ConfigurationException(
          BACKEND
              + " is not set and no backend jar is on the classpath (found only: "
              + String.join(", ", found.keySet())
              + "); add backend-jdbc, backend-zookeeper, backend-etcd, backend-kubernetes, backend-dynamodb, backend-azure-blob, backend-consul or backend-file, or set "
              + BACKEND
              + "=memory for a single process");
    }
    throw new ConfigurationException(
        BACKEND
            + " is not set and several backends are on the classpath; choose one of: "
            + String.join(", ", candidates));
  }

  private static Map<String, LeaseStoreProvider> providers(ClassLoader loader) {
    Map<String, LeaseStoreProvider> found = new TreeMap<>();
    for (LeaseStoreProvider provider : ServiceLoader.load(LeaseStoreProvider.class, loader)) {
      found.putIfAbsent(provider.name(), provider);
    }
    if (found.isEmpty()) {
      // The memory provider lives in this jar; a class loader that cannot see our own services
      // file still deserves it.
      LeaseStoreProvider memory = new MemoryLeaseStoreProvider();
      found.put(memory.name(), memory);
    }
    return found;
  }

  private void checkKeys(LeaseStoreProvider chosen, Map<String, LeaseStoreProvider> others) {
    Set<String> known = new TreeSet<>(CORE_KEYS);
    known.addAll(chosen.keys());
    List<String> unknown = new ArrayList<>();
    for (String key : values.keySet()) {
      if (known.contains(key)) {
        continue;
      }
      String backendOfKey = key.substring(PREFIX.length()).split("\\.", 2)[0];
      LeaseStoreProvider other = others.get(backendOfKey);
      if (other != null && other != chosen && other.keys().contains(key)) {
        // Settings for another backend are harmless: one file may serve several deployments.
        continue;
      }
      unknown.add(key);
    }
    UnknownKeys.refuse(
        unknown,
        misspelt,
        known,
        "backend '" + chosen.name() + "' accepts: " + String.join(", ", known));
    Set<String> knownEnv =
        known.stream().map(ElectionProperties::environmentName).collect(Collectors.toSet());
    for (String name : environment.keySet()) {
      if (!knownEnv.contains(name)) {
        log.warn(
            "Environment variable {} matches no configuration key of backend '{}'; it is ignored",
            name,
            chosen.name());
      }
    }
  }

  @Override
  public String toString() {
    Map<String, String> shown = new TreeMap<>();
    values.forEach((k, v) -> shown.put(k, isSecret(k) ? "<hidden>" : UrlSecrets.redact(v)));
    return shown.toString();
  }
}
