package dev.baton.spring.boot;

import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import java.util.Optional;

/**
 * Opens a store on a client the application already has (its {@code DataSource}, {@code
 * CuratorFramework}, jetcd {@code Client}, {@code KubernetesClient}, {@code DynamoDbClient}, {@code
 * BlobServiceClient}); one per backend jar on the classpath. The store never closes that client:
 * the application's context does, after the elector has released.
 */
interface ApplicationClientStore {

  /**
   * A store for {@code backend} on the application's client, configured from the backend's keys in
   * {@code properties} with the backend's own defaults and checks; empty when this is not its
   * backend, it has no client, or the properties name a server of their own.
   */
  Optional<LeaseStore> open(String backend, ElectionProperties properties);
}
