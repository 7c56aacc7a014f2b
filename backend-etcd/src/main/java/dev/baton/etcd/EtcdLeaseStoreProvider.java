package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import dev.baton.election.UrlSecrets;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.File;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLException;

/**
 * Opens an {@link EtcdLeaseStore} for {@code election.backend=etcd} on a jetcd client built from
 * these keys, and closes that client with the store:
 *
 * <ul>
 *   <li>{@code election.etcd.endpoints} (required): comma-separated {@code http://host:port} or
 *       {@code https://host:port}
 *   <li>{@code election.etcd.prefix}: where election keys live, default {@code /baton/elections/}
 *   <li>{@code election.etcd.username}, {@code election.etcd.password}: both or neither
 *   <li>{@code election.etcd.ca-file}: PEM certificates to trust (default: the JVM's)
 *   <li>{@code election.etcd.cert-file}, {@code election.etcd.key-file}: PEM client certificate and
 *       PKCS#8 key, both or neither
 *   <li>{@code election.etcd.call-timeout}: at most half of {@code election.renew-deadline};
 *       default half of it, at most 3s ({@link dev.baton.election.CallTimeout})
 *   <li>{@code election.etcd.lease-sharing}: {@code off} (the default: an etcd lease of its own per
 *       election, with exactly its TTL), or a duration from {@code 0s} to {@code 10s}: all
 *       elections of the store with the same TTL share one etcd lease, for processes that lead
 *       hundreds of elections or more; the duration is how old a keep-alive may be and still serve
 *       another election's renewal (see {@link EtcdLeaseStore.Builder#sharedLeases})
 *   <li>{@code election.etcd.max-txn-ops}: the cluster's {@code --max-txn-ops}, from 1 to 8192,
 *       default 128 (etcd's default); renewals of many elections confirm that many keys per
 *       transaction (see {@link EtcdLeaseStore.Builder#maxTxnOps})
 * </ul>
 */
public final class EtcdLeaseStoreProvider implements LeaseStoreProvider {

  public static final String NAME = "etcd";
  public static final String ENDPOINTS = "election.etcd.endpoints";
  public static final String PREFIX = "election.etcd.prefix";
  public static final String USERNAME = "election.etcd.username";
  public static final String PASSWORD = "election.etcd.password";
  public static final String CA_FILE = "election.etcd.ca-file";
  public static final String CERT_FILE = "election.etcd.cert-file";
  public static final String KEY_FILE = "election.etcd.key-file";
  public static final String CALL_TIMEOUT = "election.etcd.call-timeout";
  public static final String LEASE_SHARING = "election.etcd.lease-sharing";
  public static final String MAX_TXN_OPS = "election.etcd.max-txn-ops";

  /** How long a connection with calls open may stay silent before the client pings it. */
  static final Duration KEEPALIVE_TIME = Duration.ofSeconds(5);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of(
        ENDPOINTS,
        PREFIX,
        USERNAME,
        PASSWORD,
        CA_FILE,
        CERT_FILE,
        KEY_FILE,
        CALL_TIMEOUT,
        LEASE_SHARING,
        MAX_TXN_OPS);
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    List<URI> endpoints = endpoints(properties.require(ENDPOINTS));
    String prefix = properties.get(PREFIX).orElse(EtcdLeaseStore.DEFAULT_PREFIX);
    Duration callTimeout = CallTimeout.read(properties, CALL_TIMEOUT);

    Optional<Duration> keepAliveSharing = leaseSharing(properties);
    int maxTxnOps =
        properties.integer(
            MAX_TXN_OPS, EtcdLeaseStore.DEFAULT_MAX_TXN_OPS, 1, EtcdLeaseStore.MAX_TXN_OPS_LIMIT);

    ClientBuilder builder =
        Client.builder()
            .endpoints(endpoints.toArray(URI[]::new))
            // A frozen member keeps its connections open; without pings a channel on it is given
            // up late and its calls keep timing out (measured: the next leader 13 to 19 s after a
            // follower froze, 10 s with these). Only while calls are open: etcd refuses pings of
            // idle clients (and any more often than its --grpc-keepalive-min-time, 5 s).
            .keepaliveTime(KEEPALIVE_TIME)
            .keepaliveTimeout(callTimeout)
            .keepaliveWithoutCalls(false);
    Optional<String> username = properties.get(USERNAME);
    Optional<String> password = properties.get(PASSWORD);
    if (username.isPresent() != password.isPresent()) {
      throw new ConfigurationException(
          "set both "
              + USERNAME
              + " and "
              + PASSWORD
              + " or neither; only "
              + (username.isPresent() ? USERNAME : PASSWORD)
              + " is set");
    }
    if (username.isPresent()) {
      builder
          .user(ByteSequence.from(username.get(), UTF_8))
          .password(ByteSequence.from(password.get(), UTF_8));
    }
    configureTls(properties, endpoints, builder);

    Client client = builder.build();
    try {
      EtcdLeaseStore.Builder store =
          EtcdLeaseStore.builder(client)
              .prefix(prefix)
              .callTimeout(callTimeout)
              .maxTxnOps(maxTxnOps)
              .endpoints(String.join(",", endpoints.stream().map(URI::toString).toList()))
              .closesClient();
      keepAliveSharing.ifPresent(store::sharedLeases);
      return store.build();
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  /** Empty for a lease per election; else the keep-alive sharing window of shared leases. */
  private static Optional<Duration> leaseSharing(ElectionProperties properties) {
    Optional<String> value = properties.get(LEASE_SHARING);
    if (value.isEmpty() || value.get().trim().equalsIgnoreCase("off")) {
      return Optional.empty();
    }
    Duration window;
    try {
      window = ElectionProperties.parseDuration(LEASE_SHARING, value.get().trim());
    } catch (ConfigurationException e) {
      throw badLeaseSharing(value.get());
    }
    if (window.isNegative() || window.compareTo(Duration.ofSeconds(10)) > 0) {
      throw badLeaseSharing(value.get());
    }
    return Optional.of(window);
  }

  private static ConfigurationException badLeaseSharing(String value) {
    return new ConfigurationException(
        LEASE_SHARING
            + ": '"
            + value
            + "' must be off (an etcd lease per election, the default) or a duration from 0s to 10s"
            + " (one etcd lease shared per TTL; how old a keep-alive may be and still serve another election's renewal)");
  }

  private static List<URI> endpoints(String value) {
    List<URI> endpoints = new ArrayList<>();
    for (String part : value.split(",")) {
      String text = part.trim();
      if (text.isEmpty()) {
        continue;
      }
      URI uri;
      try {
        uri = new URI(text);
      } catch (URISyntaxException e) {
        throw badEndpoint(value, text);
      }
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null
          || uri.getPort() <= 0) {
        throw badEndpoint(value, text);
      }
      endpoints.add(uri);
    }
    if (endpoints.isEmpty()) {
      throw badEndpoint(value, value);
    }
    if (endpoints.stream().map(URI::getScheme).distinct().count() > 1) {
      throw new ConfigurationException(
          ENDPOINTS
              + ": '"
              + UrlSecrets.redact(value)
              + "' mixes http:// and https://; use one scheme for all endpoints");
    }
    return endpoints;
  }

  private static ConfigurationException badEndpoint(String value, String part) {
    return new ConfigurationException(
        ENDPOINTS
            + ": '"
            + UrlSecrets.redact(part)
            + "' in '"
            + UrlSecrets.redact(value)
            + "' is not an etcd endpoint; use http://host:port or https://host:port, comma-separated");
  }

  private static void configureTls(
      ElectionProperties properties, List<URI> endpoints, ClientBuilder builder) {
    Optional<File> ca = readableFile(properties, CA_FILE);
    Optional<File> cert = readableFile(properties, CERT_FILE);
    Optional<File> key = readableFile(properties, KEY_FILE);
    if (cert.isPresent() != key.isPresent()) {
      throw new ConfigurationException(
          "set both "
              + CERT_FILE
              + " and "
              + KEY_FILE
              + " or neither; only "
              + (cert.isPresent() ? CERT_FILE : KEY_FILE)
              + " is set");
    }
    boolean https = "https".equals(endpoints.get(0).getScheme());
    boolean filesGiven = ca.isPresent() || cert.isPresent();
    if (filesGiven && !https) {
      throw new ConfigurationException(
          ENDPOINTS
              + ": TLS files are set ("
              + CA_FILE
              + ", "
              + CERT_FILE
              + ", "
              + KEY_FILE
              + ") but the endpoints use http://; use https:// endpoints");
    }
    if (!https) {
      return;
    }
    try {
      SslContextBuilder tls = GrpcSslContexts.forClient();
      ca.ifPresent(tls::trustManager);
      if (cert.isPresent()) {
        tls.keyManager(cert.get(), key.get());
      }
      builder.sslContext(tls.build());
    } catch (SSLException | IllegalArgumentException e) {
      throw new ConfigurationException(
          "cannot build a TLS context from "
              + CA_FILE
              + ", "
              + CERT_FILE
              + " and "
              + KEY_FILE
              + " (PEM certificates, PKCS#8 PEM key): "
              + e.getMessage(),
          e);
    }
  }

  private static Optional<File> readableFile(ElectionProperties properties, String key) {
    Optional<String> value = properties.get(key);
    if (value.isEmpty()) {
      return Optional.empty();
    }
    Path path = Path.of(value.get());
    if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
      throw new ConfigurationException(key + ": '" + value.get() + "' is not a readable file");
    }
    return Optional.of(path.toFile());
  }
}
