package dev.baton.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStoreProvider;
import java.time.Duration;
import java.util.Properties;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Settings refused before any request is sent: each error names the key, the value and the rule.
 */
class DynamoDbLeaseStoreProviderTest {

  private final DynamoDbLeaseStoreProvider provider = new DynamoDbLeaseStoreProvider();

  private static ElectionProperties properties(String... keysAndValues) {
    Properties p = new Properties();
    p.setProperty(DynamoDbLeaseStoreProvider.REGION, "eu-west-1");
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ElectionProperties.of(p);
  }

  @Test
  void isFoundByServiceLoaderUnderItsNameWithItsKeys() {
    assertThat(
            ServiceLoader.load(LeaseStoreProvider.class).stream().map(ServiceLoader.Provider::type))
        .contains(DynamoDbLeaseStoreProvider.class);
    assertThat(provider.name()).isEqualTo("dynamodb");
    assertThat(provider.keys())
        .containsExactlyInAnyOrder(
            "election.dynamodb.table",
            "election.dynamodb.region",
            "election.dynamodb.endpoint",
            "election.dynamodb.call-timeout",
            "election.dynamodb.create-table",
            "election.dynamodb.allow-global-table");
  }

  @Test
  void aCallTimeoutOverHalfTheRenewDeadlineIsRefusedWithItsKey() {
    assertThatThrownBy(
            () -> provider.open(properties(DynamoDbLeaseStoreProvider.CALL_TIMEOUT, "6s")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.dynamodb.call-timeout: 6s")
        .hasMessageContaining("at most half the renew deadline");
  }

  @Test
  void aTableNameDynamoDbRefusesIsNamedWithTheRule() {
    assertThatThrownBy(
            () -> provider.open(properties(DynamoDbLeaseStoreProvider.TABLE, "no spaces")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.dynamodb.table: 'no spaces'")
        .hasMessageContaining("3 to 255 letters, digits");
  }

  @Test
  void aRegionThatIsNoRegionNameIsRefused() {
    assertThatThrownBy(
            () -> provider.open(properties(DynamoDbLeaseStoreProvider.REGION, "Frankfurt")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.dynamodb.region: 'Frankfurt'")
        .hasMessageContaining("such as eu-west-1");
  }

  @Test
  void anEndpointThatIsNoBareHttpUrlIsRefusedWithoutShowingItsPassword() {
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        DynamoDbLeaseStoreProvider.ENDPOINT, "http://me:hunter2@127.0.0.1:8000")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.dynamodb.endpoint")
        .hasMessageContaining("http(s)://host[:port]")
        .hasMessageNotContaining("hunter2");
    assertThatThrownBy(
            () -> provider.open(properties(DynamoDbLeaseStoreProvider.ENDPOINT, "127.0.0.1:8000")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.dynamodb.endpoint: '127.0.0.1:8000'");
  }

  @Test
  void createTableMustBeTrueOrFalse() {
    assertThatThrownBy(
            () -> provider.open(properties(DynamoDbLeaseStoreProvider.CREATE_TABLE, "yes")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.dynamodb.create-table: 'yes'")
        .hasMessageContaining("true or false");
  }

  @Test
  void allowGlobalTableMustBeTrueOrFalse() {
    assertThatThrownBy(
            () -> provider.open(properties(DynamoDbLeaseStoreProvider.ALLOW_GLOBAL_TABLE, "1")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.dynamodb.allow-global-table: '1'")
        .hasMessageContaining("true or false");
  }

  @Test
  void theBuilderRefusesAZeroCallTimeoutAndABadTableWithTheirNames() {
    try (DynamoDbClient client =
        DynamoDbClient.builder()
            .region(Region.EU_WEST_1)
            .credentialsProvider(Dynalite.CREDENTIALS)
            .build()) {
      DynamoDbLeaseStore.Builder builder = DynamoDbLeaseStore.builder(client);
      assertThatThrownBy(() -> builder.callTimeout(Duration.ZERO))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("callTimeout: 0");
      assertThatThrownBy(() -> builder.table("ab"))
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("table: 'ab'");
    }
  }
}
