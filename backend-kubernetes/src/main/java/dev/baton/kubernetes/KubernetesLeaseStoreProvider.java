package dev.baton.kubernetes;

import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * {@code election.backend=kubernetes}: builds a fabric8 client from the pod's service account or a
 * kubeconfig, and closes it with the store.
 *
 * <ul>
 *   <li>{@code election.kubernetes.namespace}: where the Lease objects live; default: the pod's own
 *       namespace, else the kubeconfig context's, else {@code default}
 *   <li>{@code election.kubernetes.kubeconfig}: a kubeconfig file; default: fabric8's discovery
 *       ({@code KUBECONFIG}, {@code ~/.kube/config}, then the in-cluster service account)
 *   <li>{@code election.kubernetes.call-timeout}: the longest one API call may take; at most half
 *       of {@code election.renew-deadline}; default half of it, at most 3s ({@link CallTimeout})
 * </ul>
 */
public final class KubernetesLeaseStoreProvider implements LeaseStoreProvider {

  public static final String NAME = "kubernetes";
  public static final String NAMESPACE = "election.kubernetes.namespace";
  public static final String KUBECONFIG = "election.kubernetes.kubeconfig";
  public static final String CALL_TIMEOUT = "election.kubernetes.call-timeout";

  /** Where Kubernetes mounts the pod's own namespace. */
  static final Path POD_NAMESPACE_FILE =
      Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of(NAMESPACE, KUBECONFIG, CALL_TIMEOUT);
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    Duration callTimeout = CallTimeout.read(properties, CALL_TIMEOUT);
    Config config = clientConfig(properties.get(KUBECONFIG));
    int millis = (int) callTimeout.toMillis();
    config.setRequestTimeout(millis);
    config.setConnectionTimeout(millis);
    config.setRequestRetryBackoffLimit(0);
    String namespace = namespace(properties.get(NAMESPACE), POD_NAMESPACE_FILE, config);
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    try {
      return KubernetesLeaseStore.builder(client)
          .namespace(namespace)
          .callTimeout(callTimeout)
          .closesClient()
          .build();
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  private static Config clientConfig(Optional<String> kubeconfig) {
    if (kubeconfig.isEmpty()) {
      return Config.autoConfigure(null);
    }
    Path file = Path.of(kubeconfig.get());
    if (!Files.isReadable(file)) {
      throw new ConfigurationException(
          KUBECONFIG
              + ": '"
              + kubeconfig.get()
              + "' is not a readable file; give the path of a kubeconfig, or leave it unset to use the service account");
    }
    try {
      return Config.fromKubeconfig(file.toFile());
    } catch (RuntimeException e) {
      // A parse failure's message quotes the file (YAML parsers show the offending line), and
      // tokens live there: name the file and the kind of failure only, and drop the cause.
      throw new ConfigurationException(
          KUBECONFIG
              + ": '"
              + kubeconfig.get()
              + "' is not a usable kubeconfig ("
              + e.getClass().getSimpleName()
              + ")");
    }
  }

  /** The configured namespace, else the pod's own, else the kubeconfig context's, else default. */
  static String namespace(Optional<String> configured, Path podNamespaceFile, Config config) {
    if (configured.isPresent()) {
      return configured.get();
    }
    try {
      if (Files.isReadable(podNamespaceFile)) {
        String own = Files.readString(podNamespaceFile, StandardCharsets.UTF_8).trim();
        if (!own.isEmpty()) {
          return own;
        }
      }
    } catch (IOException e) {
      // Not in a pod after all; fall back like kubectl does.
    }
    String fromConfig = config == null ? null : config.getNamespace();
    return fromConfig == null || fromConfig.isBlank() ? "default" : fromConfig;
  }
}
