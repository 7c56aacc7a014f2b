package dev.baton.azureblob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStoreProvider;
import java.util.Properties;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/**
 * Settings refused before any request is sent: each error names the key, the value and the rule,
 * and no secret.
 */
class AzureBlobLeaseStoreProviderTest {

  private static final String SAS =
      "sv=2026-02-06&ss=b&srt=co&sp=rwc&se=2030-01-01T00:00:00Z&sig=c2VjcmV0LXNpZ25hdHVyZQ%3D%3D";

  private final AzureBlobLeaseStoreProvider provider = new AzureBlobLeaseStoreProvider();

  private static ElectionProperties properties(String... keysAndValues) {
    Properties p = new Properties();
    p.setProperty(AzureBlobLeaseStoreProvider.ENDPOINT, "https://myaccount.blob.core.windows.net");
    p.setProperty(AzureBlobLeaseStoreProvider.SAS_TOKEN, SAS);
    for (int i = 0; i < keysAndValues.length; i += 2) {
      if (keysAndValues[i + 1] == null) {
        p.remove(keysAndValues[i]);
      } else {
        p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
      }
    }
    return ElectionProperties.of(p);
  }

  @Test
  void isFoundByServiceLoaderUnderItsNameWithItsKeys() {
    assertThat(
            ServiceLoader.load(LeaseStoreProvider.class).stream().map(ServiceLoader.Provider::type))
        .contains(AzureBlobLeaseStoreProvider.class);
    assertThat(provider.name()).isEqualTo("azure-blob");
    assertThat(provider.keys())
        .containsExactlyInAnyOrder(
            "election.azure-blob.connection-string",
            "election.azure-blob.endpoint",
            "election.azure-blob.sas-token",
            "election.azure-blob.container",
            "election.azure-blob.create-container",
            "election.azure-blob.call-timeout");
  }

  @Test
  void aLeaseDurationAzureDoesNotGrantIsRefusedWithItsKeyAndTheRange() {
    assertThatThrownBy(() -> provider.open(properties(ElectionProperties.LEASE_DURATION, "10s")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.lease-duration: 10s")
        .hasMessageContaining("15s to 60s");
    assertThatThrownBy(() -> provider.open(properties(ElectionProperties.LEASE_DURATION, "2m")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.lease-duration: 120s")
        .hasMessageContaining("15s to 60s");
  }

  @Test
  void aCallTimeoutOverHalfTheRenewDeadlineIsRefusedWithItsKey() {
    assertThatThrownBy(
            () -> provider.open(properties(AzureBlobLeaseStoreProvider.CALL_TIMEOUT, "6s")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.azure-blob.call-timeout: 6s")
        .hasMessageContaining("at most half the renew deadline");
  }

  @Test
  void aContainerNameAzureRefusesIsNamedWithTheRule() {
    assertThatThrownBy(
            () -> provider.open(properties(AzureBlobLeaseStoreProvider.CONTAINER, "Elections")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.azure-blob.container: 'Elections'")
        .hasMessageContaining("3 to 63 lower-case letters");
  }

  @Test
  void withoutCredentialsTheProviderSaysWhatToSet() {
    assertThatThrownBy(() -> provider.open(properties(AzureBlobLeaseStoreProvider.SAS_TOKEN, null)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("election.azure-blob.connection-string")
        .hasMessageContaining("election.azure-blob.sas-token is not");
  }

  @Test
  void aConnectionStringBesideAnEndpointIsRefusedWithoutShowingEither() {
    String connectionString =
        "DefaultEndpointsProtocol=https;AccountName=myaccount;AccountKey=c2VjcmV0LWtleQ==;EndpointSuffix=core.windows.net";
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(AzureBlobLeaseStoreProvider.CONNECTION_STRING, connectionString)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("either the connection string or the endpoint")
        .hasMessageNotContaining("c2VjcmV0")
        .hasMessageNotContaining("sig=");
  }

  @Test
  void aConnectionStringTheSdkCannotReadIsRefusedWithoutShowingIt() {
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        AzureBlobLeaseStoreProvider.ENDPOINT,
                        null,
                        AzureBlobLeaseStoreProvider.SAS_TOKEN,
                        null,
                        AzureBlobLeaseStoreProvider.CONNECTION_STRING,
                        "AccountKey=c2VjcmV0LWtleQ==")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(
            "election.azure-blob.connection-string: <hidden> is not a storage connection string")
        .hasMessageNotContaining("c2VjcmV0");
  }

  @Test
  void anEndpointCarryingASasIsRefusedWithoutShowingIt() {
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        AzureBlobLeaseStoreProvider.ENDPOINT,
                        "https://myaccount.blob.core.windows.net/?" + SAS)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(
            "election.azure-blob.endpoint: 'https://myaccount.blob.core.windows.net/?<hidden>'")
        .hasMessageContaining(AzureBlobLeaseStoreProvider.SAS_TOKEN)
        .hasMessageNotContaining("sig=");
    assertThatThrownBy(
            () ->
                provider.open(
                    properties(
                        AzureBlobLeaseStoreProvider.ENDPOINT, "myaccount.blob.core.windows.net")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(
            "election.azure-blob.endpoint: 'myaccount.blob.core.windows.net' is not a bare blob"
                + " endpoint");
  }

  @Test
  void aStoreOpensFromAnEndpointAndSasWithoutARequest() {
    try (var store = provider.open(properties())) {
      assertThat(store.describe())
          .isEqualTo(
              "azure-blob (container baton-elections at"
                  + " https://myaccount.blob.core.windows.net/baton-elections)");
    }
  }
}
