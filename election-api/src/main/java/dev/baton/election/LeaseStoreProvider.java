package dev.baton.election;

import java.util.Set;

/**
 * Builds a {@link LeaseStore} from configuration. Backends register one in {@code
 * META-INF/services/dev.baton.election.LeaseStoreProvider}; {@link ElectionProperties#openStore()}
 * finds it with {@link java.util.ServiceLoader}.
 */
public interface LeaseStoreProvider {

  /** The name users choose with {@code election.backend}: {@code jdbc}, {@code etcd}, ... */
  String name();

  /**
   * Every key this backend reads, all under {@code election.<name>.}. Any other key under that
   * prefix is refused as a likely typo.
   */
  Set<String> keys();

  /**
   * Opens a store. Reads only its own keys; reports bad or missing values with a {@link
   * ConfigurationException} that names the key, the value and what is accepted.
   */
  LeaseStore open(ElectionProperties properties);
}
