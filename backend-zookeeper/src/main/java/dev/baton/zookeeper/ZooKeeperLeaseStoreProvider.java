package dev.baton.zookeeper;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.data.ACL;

/**
 * Opens a {@link ZooKeeperLeaseStore} for {@code election.backend=zookeeper} on a Curator client of
 * its own, which the store closes when it is closed.
 *
 * <p>Keys: {@value #CONNECT_STRING} (required, {@code host:port[,host:port...][/chroot]}), {@value
 * #BASE_PATH} (default {@value ZooKeeperLeaseStore#DEFAULT_BASE_PATH}), {@value #SESSION_TIMEOUT}
 * (default 15s: the lease's TTL, clamped by the servers), {@value #CONNECTION_TIMEOUT} (default 5s,
 * or the session timeout when that is shorter), {@value #CALL_TIMEOUT} (default 3s), {@value
 * #DIGEST} ({@code user:password}, never shown) and {@value #ACL} ({@code open} or {@code creator};
 * default {@code creator} with a digest, {@code open} without).
 */
public final class ZooKeeperLeaseStoreProvider implements LeaseStoreProvider {

  public static final String NAME = "zookeeper";
  public static final String CONNECT_STRING = "election.zookeeper.connect-string";
  public static final String BASE_PATH = "election.zookeeper.base-path";
  public static final String SESSION_TIMEOUT = "election.zookeeper.session-timeout";
  public static final String CONNECTION_TIMEOUT = "election.zookeeper.connection-timeout";
  public static final String CALL_TIMEOUT = "election.zookeeper.call-timeout";
  public static final String DIGEST = "election.zookeeper.digest";
  public static final String ACL = "election.zookeeper.acl";

  static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(15);
  static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(5);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of(
        CONNECT_STRING, BASE_PATH, SESSION_TIMEOUT, CONNECTION_TIMEOUT, CALL_TIMEOUT, DIGEST, ACL);
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    Settings settings = Settings.of(properties);
    CuratorFrameworkFactory.Builder curator =
        CuratorFrameworkFactory.builder()
            .connectString(settings.connectString)
            .sessionTimeoutMs(settings.sessionTimeoutMs)
            .connectionTimeoutMs(settings.connectionTimeoutMs)
            // Bounded: only Curator's own background work (watch registration, creating the
            // election nodes) retries; the store's calls are bounded by the call timeout.
            .retryPolicy(new BoundedExponentialBackoffRetry(100, 1_000, 3));
    settings.digest.ifPresent(d -> curator.authorization("digest", d.getBytes(UTF_8)));
    CuratorFramework client = curator.build();
    client.start();
    try {
      return ZooKeeperLeaseStore.builder(client)
          .basePath(settings.basePath)
          .callTimeout(settings.callTimeout)
          .acl(settings.acl)
          .closesClient()
          .build();
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  /** The provider's configuration, read and checked once. */
  static final class Settings {
    final String connectString;
    final String basePath;
    final int sessionTimeoutMs;
    final int connectionTimeoutMs;
    final Duration callTimeout;
    final Optional<String> digest;
    final List<ACL> acl;

    private Settings(ElectionProperties p) {
      connectString = checkedConnectString(p.require(CONNECT_STRING));
      basePath = p.get(BASE_PATH).orElse(ZooKeeperLeaseStore.DEFAULT_BASE_PATH);
      try {
        ElectionNodes.checkBasePath(basePath);
      } catch (IllegalArgumentException e) {
        throw new ConfigurationException(BASE_PATH + ": " + e.getMessage());
      }
      Duration session = positiveMillis(p, SESSION_TIMEOUT, DEFAULT_SESSION_TIMEOUT);
      sessionTimeoutMs = (int) session.toMillis();
      // Curator warns when the connection timeout exceeds the session timeout.
      Duration defaultConnection =
          DEFAULT_CONNECTION_TIMEOUT.compareTo(session) < 0 ? DEFAULT_CONNECTION_TIMEOUT : session;
      connectionTimeoutMs =
          (int) positiveMillis(p, CONNECTION_TIMEOUT, defaultConnection).toMillis();
      callTimeout = CallTimeout.read(p, CALL_TIMEOUT);
      digest = p.get(DIGEST);
      digest.ifPresent(Settings::checkDigest);
      acl = acl(p.get(ACL).orElse(digest.isPresent() ? "creator" : "open"), digest.isPresent());
    }

    static Settings of(ElectionProperties properties) {
      return new Settings(properties);
    }

    private static String checkedConnectString(String value) {
      try {
        if (!new ConnectStringParser(value).getServerAddresses().isEmpty()) {
          return value;
        }
      } catch (IllegalArgumentException e) {
        // reported below
      }
      throw new ConfigurationException(
          CONNECT_STRING
              + ": '"
              + value
              + "' is not a ZooKeeper connect string; use host:port[,host:port...][/chroot]");
    }

    private static Duration positiveMillis(ElectionProperties p, String key, Duration otherwise) {
      Duration d = p.duration(key, otherwise);
      if (d.toMillis() < 1 || d.toMillis() > Integer.MAX_VALUE) {
        throw new ConfigurationException(
            key
                + ": "
                + d
                + " is out of range; use at least 1ms and at most "
                + Integer.MAX_VALUE
                + "ms");
      }
      return d;
    }

    private static void checkDigest(String digest) {
      int colon = digest.indexOf(':');
      if (colon <= 0 || colon == digest.length() - 1) {
        throw new ConfigurationException(
            DIGEST + " must have the form user:password (the value is not shown)");
      }
    }

    private static List<ACL> acl(String value, boolean hasDigest) {
      switch (value.toLowerCase(Locale.ROOT)) {
        case "open":
          return ZooDefs.Ids.OPEN_ACL_UNSAFE;
        case "creator":
          if (!hasDigest) {
            throw new ConfigurationException(
                ACL
                    + ": 'creator' gives the nodes to the credentials that created them, but "
                    + DIGEST
                    + " is not set;"
                    + " set it, or use "
                    + ACL
                    + "=open");
          }
          return ZooDefs.Ids.CREATOR_ALL_ACL;
        default:
          throw new ConfigurationException(
              ACL
                  + ": '"
                  + value
                  + "' is not an ACL this backend knows; use open (anyone may read and write) or creator"
                  + " (only the credentials in "
                  + DIGEST
                  + ")");
      }
    }
  }
}
