package dev.baton.consul;

import com.google.common.net.HostAndPort;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.kiwiproject.consul.Consul;

/**
 * Opens a {@link ConsulLeaseStore} for {@code election.backend=consul} on a consul-client built
 * from these keys, and closes that client with the store:
 *
 * <ul>
 *   <li>{@code election.consul.url}: comma-separated {@code http://host:port} of Consul agents or
 *       servers, default {@code http://127.0.0.1:8500} (the local agent, as Consul is usually
 *       reached); with several, a call that cannot reach one goes on to the next
 *   <li>{@code election.consul.token}: the ACL token (secret; never shown); its policy needs {@code
 *       key_prefix "<prefix>" { policy = "write" }} and {@code session_prefix "" { policy = "write"
 *       }} (docs/consul.md)
 *   <li>{@code election.consul.prefix}: where election keys live, default {@code baton/elections/}
 *   <li>{@code election.consul.call-timeout}: at most half of {@code election.renew-deadline};
 *       default half of it, at most 3s ({@link CallTimeout})
 * </ul>
 */
public final class ConsulLeaseStoreProvider implements LeaseStoreProvider {

  public static final String NAME = "consul";
  public static final String URL = "election.consul.url";
  public static final String TOKEN = "election.consul.token";
  public static final String PREFIX = "election.consul.prefix";
  public static final String CALL_TIMEOUT = "election.consul.call-timeout";

  public static final String DEFAULT_URL = "http://127.0.0.1:8500";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of(URL, TOKEN, PREFIX, CALL_TIMEOUT);
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    String urls = properties.get(URL).orElse(DEFAULT_URL);
    List<HostAndPort> servers = servers(urls);
    String prefix = properties.get(PREFIX).orElse(ConsulLeaseStore.DEFAULT_PREFIX);
    Duration callTimeout = CallTimeout.read(properties, CALL_TIMEOUT);
    Consul consul = client(servers, properties.get(TOKEN).orElse(null), callTimeout);
    try {
      return ConsulLeaseStore.builder(consul)
          .prefix(prefix)
          .callTimeout(callTimeout)
          .address(urls.trim())
          .closesClient()
          .build();
    } catch (RuntimeException e) {
      consul.destroy();
      throw e;
    }
  }

  /**
   * A client whose socket timeouts are the call timeout (the store puts its own deadline around
   * each call as well) and that does not ping the agent when built, so a store opens while Consul
   * is down and its calls fail as calls do.
   */
  static Consul client(List<HostAndPort> servers, String token, Duration callTimeout) {
    Consul.Builder builder =
        Consul.builder()
            .withPing(false)
            .withConnectTimeoutMillis(callTimeout.toMillis())
            .withReadTimeoutMillis(callTimeout.toMillis())
            .withWriteTimeoutMillis(callTimeout.toMillis());
    if (servers.size() == 1) {
      builder.withHostAndPort(servers.get(0));
    } else {
      // A server that failed is skipped for one call timeout. Longer would be a blackout: once
      // every server has failed (a cut, a restart) the client refuses every call until the first
      // comes back off the list, without trying any; with 5 s, a three-server store refused all
      // calls for seconds after a cut healed (ConsulClusterConformanceIT, s12). One call timeout
      // stays well within the renew deadline, which is at least two of them.
      builder.withMultipleHostAndPort(servers, callTimeout);
    }
    if (token != null && !token.isBlank()) {
      builder.withAclToken(token.trim());
    }
    return builder.build();
  }

  static List<HostAndPort> servers(String value) {
    List<HostAndPort> servers = new ArrayList<>();
    for (String part : value.split(",")) {
      String text = part.trim();
      URI uri;
      try {
        uri = new URI(text);
      } catch (URISyntaxException e) {
        throw bad(value, "'" + text + "' is not a URL");
      }
      if (!"http".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0) {
        throw bad(value, "'" + text + "' is not of the form http://host:port");
      }
      if (uri.getPath() != null && !uri.getPath().isEmpty() && !uri.getPath().equals("/")) {
        throw bad(value, "'" + text + "' has a path; give only http://host:port");
      }
      servers.add(HostAndPort.fromParts(uri.getHost(), uri.getPort()));
    }
    return servers;
  }

  private static ConfigurationException bad(String value, String why) {
    return new ConfigurationException(
        URL
            + ": "
            + ElectionProperties.shown(URL, value)
            + " is not accepted: "
            + why
            + " (comma-separated http://host:port of Consul agents, such as "
            + DEFAULT_URL
            + ")");
  }
}
