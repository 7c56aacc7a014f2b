package dev.baton.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import java.util.Properties;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;

/** Configuration of the provider, checked before any client is built: no server needed. */
class ZooKeeperLeaseStoreProviderTest {

  private static final String SECRET = "s3cret-pw";

  private static ElectionProperties properties(String... keysAndValues) {
    Properties p = new Properties();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ElectionProperties.of(p);
  }

  private static ZooKeeperLeaseStoreProvider.Settings settings(String... keysAndValues) {
    return ZooKeeperLeaseStoreProvider.Settings.of(properties(keysAndValues));
  }

  @Test
  void isNamedZookeeperAndListsEveryKeyItReads() {
    ZooKeeperLeaseStoreProvider provider = new ZooKeeperLeaseStoreProvider();

    assertThat(provider.name()).isEqualTo("zookeeper");
    assertThat(provider.keys())
        .containsExactlyInAnyOrder(
            "election.zookeeper.connect-string",
            "election.zookeeper.base-path",
            "election.zookeeper.session-timeout",
            "election.zookeeper.connection-timeout",
            "election.zookeeper.call-timeout",
            "election.zookeeper.digest",
            "election.zookeeper.acl");
  }

  @Test
  void defaultsAreAFifteenSecondSessionAThreeSecondCallTimeoutAndOpenNodes() {
    ZooKeeperLeaseStoreProvider.Settings s =
        settings("election.zookeeper.connect-string", "127.0.0.1:2181");

    assertThat(s.sessionTimeoutMs).isEqualTo(15_000);
    assertThat(s.connectionTimeoutMs).isEqualTo(5_000);
    assertThat(s.callTimeout).hasSeconds(3);
    assertThat(s.basePath).isEqualTo("/baton/elections");
    assertThat(s.digest).isEmpty();
    assertThat(s.acl).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
  }

  @Test
  void aDigestMakesTheNodesTheCreatorsUnlessTheAclSaysOtherwise() {
    assertThat(
            settings(
                    "election.zookeeper.connect-string",
                    "127.0.0.1:2181",
                    "election.zookeeper.digest",
                    "baton:" + SECRET)
                .acl)
        .isEqualTo(ZooDefs.Ids.CREATOR_ALL_ACL);
    assertThat(
            settings(
                    "election.zookeeper.connect-string", "127.0.0.1:2181",
                    "election.zookeeper.digest", "baton:" + SECRET,
                    "election.zookeeper.acl", "open")
                .acl)
        .isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
  }

  @Test
  void aShortSessionShortensTheDefaultConnectionTimeout() {
    ZooKeeperLeaseStoreProvider.Settings s =
        settings(
            "election.zookeeper.connect-string", "127.0.0.1:2181",
            "election.zookeeper.session-timeout", "4s",
            "election.zookeeper.call-timeout", "1s");

    assertThat(s.sessionTimeoutMs).isEqualTo(4_000);
    assertThat(s.connectionTimeoutMs).isEqualTo(4_000);
  }

  @Test
  void theConnectStringIsRequired() {
    assertThatThrownBy(() -> settings("election.zookeeper.base-path", "/x"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.zookeeper.connect-string")
        .hasMessageContaining("ELECTION_ZOOKEEPER_CONNECT_STRING");
  }

  @Test
  void badValuesAreRefusedNamingKeyValueAndWhatIsAccepted() {
    assertThatThrownBy(() -> settings("election.zookeeper.connect-string", "host:port"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.zookeeper.connect-string")
        .hasMessageContaining("'host:port'")
        .hasMessageContaining("host:port[,host:port...][/chroot]");
    assertThatThrownBy(
            () ->
                settings(
                    "election.zookeeper.connect-string",
                    "127.0.0.1:2181",
                    "election.zookeeper.base-path",
                    "relative"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.zookeeper.base-path")
        .hasMessageContaining("'relative'")
        .hasMessageContaining("absolute path");
    assertThatThrownBy(
            () ->
                settings(
                    "election.zookeeper.connect-string",
                    "127.0.0.1:2181",
                    "election.zookeeper.acl",
                    "world"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.zookeeper.acl")
        .hasMessageContaining("'world'")
        .hasMessageContaining("open")
        .hasMessageContaining("creator");
    assertThatThrownBy(
            () ->
                settings(
                    "election.zookeeper.connect-string",
                    "127.0.0.1:2181",
                    "election.zookeeper.session-timeout",
                    "soon"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.zookeeper.session-timeout");
    assertThatThrownBy(
            () ->
                settings(
                    "election.zookeeper.connect-string", "127.0.0.1:2181",
                    "election.zookeeper.call-timeout", "6s"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(
            "election.zookeeper.call-timeout: 6s must be more than 0 and at most half the renew deadline");
  }

  @Test
  void theCreatorAclNeedsCredentials() {
    assertThatThrownBy(
            () ->
                settings(
                    "election.zookeeper.connect-string",
                    "127.0.0.1:2181",
                    "election.zookeeper.acl",
                    "creator"))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.zookeeper.digest is not set");
  }

  @Test
  void aMalformedDigestIsRefusedWithoutShowingIt() {
    for (String digest : new String[] {SECRET, ":" + SECRET, SECRET + ":"}) {
      assertThatThrownBy(
              () ->
                  settings(
                      "election.zookeeper.connect-string",
                      "127.0.0.1:2181",
                      "election.zookeeper.digest",
                      digest))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("user:password")
          .hasMessageNotContaining(SECRET);
    }
  }
}
