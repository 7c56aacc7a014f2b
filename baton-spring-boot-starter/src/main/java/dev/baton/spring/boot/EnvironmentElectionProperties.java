package dev.baton.spring.boot;

import dev.baton.election.ElectionProperties;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The application's configuration as Baton's own binding reads it: Spring resolves the values
 * (every property source in its order, relaxed forms, {@code ELECTION_*} variables, placeholders),
 * and {@link ElectionProperties} applies Baton's keys, defaults, checks and messages to them, the
 * same as outside Spring.
 *
 * <p>Every key Baton reads is looked up through Spring. Other names under {@code election.} (except
 * the starter's own, {@link BatonProperties}), and keys under a near miss of that prefix, are
 * passed on without their values, so that Baton refuses them as typos ({@code
 * election.renew-dealine}, {@code electon.name}) with its own message. An {@code ELECTION_*}
 * variable that matches no key is only warned about, as outside Spring: the environment is shared
 * with other programs.
 */
final class EnvironmentElectionProperties {

  /** Keys under {@code election.} that only the starter reads ({@link BatonProperties}). */
  static final Set<String> SPRING_KEYS =
      Set.of("election.enabled", "election.metrics.client-go-status");

  private EnvironmentElectionProperties() {}

  static ElectionProperties read(ConfigurableEnvironment environment) {
    Set<String> known = ElectionProperties.knownKeys();
    List<ConfigurationPropertyName> accepted = new ArrayList<>();
    Set<String> acceptedVariables = new TreeSet<>();
    for (String key : union(known, SPRING_KEYS)) {
      accepted.add(ConfigurationPropertyName.of(key));
      // Baton's form (ELECTION_RENEW_DEADLINE) and Spring's own (ELECTION_RENEWDEADLINE).
      acceptedVariables.add(ElectionProperties.environmentName(key));
      acceptedVariables.add(key.toUpperCase(Locale.ROOT).replace("-", "").replace('.', '_'));
    }
    Properties properties = new Properties();
    Map<String, String> unknownVariables = new TreeMap<>();
    for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
      Object underlying = source.getUnderlyingSource();
      if (underlying instanceof SystemEnvironmentPropertySource variables) {
        for (String name : variables.getPropertyNames()) {
          String upper = name.toUpperCase(Locale.ROOT);
          if (upper.startsWith("ELECTION_") && !acceptedVariables.contains(upper)) {
            unknownVariables.put(upper, String.valueOf(variables.getProperty(name)));
          }
        }
      } else if (source instanceof IterableConfigurationPropertySource names) {
        names.stream().forEach(name -> passOnUnread(withoutIndex(name), accepted, properties));
      }
    }
    Binder binder = Binder.get(environment);
    for (String key : known) {
      value(binder, key).ifPresent(v -> properties.setProperty(key, v));
    }
    return ElectionProperties.of(properties, unknownVariables);
  }

  /**
   * Puts a name Baton does not read into {@code properties} for Baton to judge, without its value
   * (a refusal names only the key, and the value may be a secret): every name under {@code
   * election.}, and a name under another prefix when, under {@code election.}, it would be a key
   * ({@code electon.name}), so that Baton refuses it if that prefix is a near miss. Unlike Baton's
   * own file, the application's configuration holds other libraries' keys, and {@code
   * selection.mode} is not a typo.
   */
  private static void passOnUnread(
      ConfigurationPropertyName name,
      List<ConfigurationPropertyName> accepted,
      Properties properties) {
    if (name.getNumberOfElements() < 2 || accepted.stream().anyMatch(name::equals)) {
      return;
    }
    String key = name.toString();
    ConfigurationPropertyName underElection =
        ConfigurationPropertyName.adapt(
            ElectionProperties.PREFIX + key.substring(key.indexOf('.') + 1), '.');
    if (name.getElement(0, Form.UNIFORM).equals("election")
        || accepted.stream().anyMatch(underElection::equals)) {
      properties.setProperty(key, "");
    }
  }

  /**
   * {@code election.etcd.endpoints[0]} (a YAML list) is a value of {@code election.etcd.endpoints}.
   */
  private static ConfigurationPropertyName withoutIndex(ConfigurationPropertyName name) {
    ConfigurationPropertyName n = name;
    while (n.getNumberOfElements() > 1 && n.isLastElementIndexed()) {
      n = n.getParent();
    }
    return n;
  }

  /** The value Spring resolves for {@code key}; a list (YAML) as Baton writes one, with commas. */
  private static Optional<String> value(Binder binder, String key) {
    String single = binder.bind(key, Bindable.of(String.class)).orElse(null);
    if (single != null) {
      return Optional.of(single);
    }
    return Optional.ofNullable(
        binder
            .bind(key, Bindable.listOf(String.class))
            .map(list -> String.join(",", list))
            .orElse(null));
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> all = new TreeSet<>(a);
    all.addAll(b);
    return all;
  }
}
