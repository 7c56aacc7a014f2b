package dev.baton.azureblob;

import com.azure.core.http.HttpClient;
import com.azure.core.http.jdk.httpclient.JdkHttpClientBuilder;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.BlobContainerClientBuilder;
import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.common.policy.RequestRetryOptions;
import com.azure.storage.common.policy.RetryPolicyType;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code election.backend=azure-blob}: builds a container client from a connection string, or from
 * an account endpoint and a SAS token (both secrets: never shown in messages or logs).
 *
 * <ul>
 *   <li>{@code election.azure-blob.connection-string}: the storage account's connection string
 *       (with an account key or a SAS); either this or {@code endpoint} and {@code sas-token}
 *   <li>{@code election.azure-blob.endpoint}: the account's blob endpoint, such as {@code
 *       https://myaccount.blob.core.windows.net}
 *   <li>{@code election.azure-blob.sas-token}: a SAS for the container (permissions rwc, see
 *       docs/azure-blob.md), with or without its leading '?'
 *   <li>{@code election.azure-blob.container}: the container of the election blobs; default {@value
 *       AzureBlobLeaseStore#DEFAULT_CONTAINER}
 *   <li>{@code election.azure-blob.create-container}: {@code true} to create the container when it
 *       is missing (needs a permission on the account); default {@code false}
 *   <li>{@code election.azure-blob.call-timeout}: the longest one store call may take; at most half
 *       of {@code election.renew-deadline}; default half of it, at most 3s ({@link CallTimeout})
 * </ul>
 *
 * <p>{@code election.lease-duration}, when set, must be 15s to 60s: the only leases Azure grants.
 */
public final class AzureBlobLeaseStoreProvider implements LeaseStoreProvider {

  public static final String NAME = "azure-blob";
  public static final String CONNECTION_STRING = "election.azure-blob.connection-string";
  public static final String ENDPOINT = "election.azure-blob.endpoint";
  public static final String SAS_TOKEN = "election.azure-blob.sas-token";
  public static final String CONTAINER = "election.azure-blob.container";
  public static final String CREATE_CONTAINER = "election.azure-blob.create-container";
  public static final String CALL_TIMEOUT = "election.azure-blob.call-timeout";

  /** Azure's rule for container names. */
  private static final Pattern CONTAINER_NAME =
      Pattern.compile("[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]");

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of(
        CONNECTION_STRING, ENDPOINT, SAS_TOKEN, CONTAINER, CREATE_CONTAINER, CALL_TIMEOUT);
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    checkLeaseDuration(properties);
    Duration callTimeout = CallTimeout.read(properties, CALL_TIMEOUT);
    String container = container(properties);
    Optional<String> connectionString = properties.get(CONNECTION_STRING);
    Optional<String> endpoint = properties.get(ENDPOINT);
    Optional<String> sasToken = properties.get(SAS_TOKEN);
    BlobContainerClientBuilder builder = clientBuilder(callTimeout).containerName(container);
    if (connectionString.isPresent()) {
      if (endpoint.isPresent() || sasToken.isPresent()) {
        throw new ConfigurationException(
            CONNECTION_STRING
                + " is set, and so is "
                + (endpoint.isPresent() ? ENDPOINT : SAS_TOKEN)
                + "; set either the connection string or the endpoint with a SAS token");
      }
      try {
        builder.connectionString(connectionString.get());
      } catch (IllegalArgumentException e) {
        // The SDK's message may quote the string, account key and all: say only what is wrong.
        throw new ConfigurationException(
            CONNECTION_STRING
                + ": "
                + ElectionProperties.shown(CONNECTION_STRING, connectionString.get())
                + " is not a storage connection string; use one from the portal's Access keys or"
                + " Shared access signature page");
      }
    } else if (endpoint.isPresent() && sasToken.isPresent()) {
      builder.endpoint(endpoint(endpoint.get())).sasToken(sasToken.get());
    } else {
      throw new ConfigurationException(
          "set "
              + CONNECTION_STRING
              + ", or "
              + ENDPOINT
              + " with "
              + SAS_TOKEN
              + ", to reach the storage account"
              + (endpoint.isPresent()
                  ? " (" + ENDPOINT + " is set, " + SAS_TOKEN + " is not)"
                  : ""));
    }
    return storeOn(builder.buildClient(), properties);
  }

  /**
   * A store on the container {@value #CONTAINER} names, through a client the application built
   * itself (its credentials and retry policy, as Spring Cloud Azure declares one), with this
   * backend's store keys ({@value #CONTAINER}, {@value #CREATE_CONTAINER}, {@value #CALL_TIMEOUT})
   * and the lease duration checked as {@link #open} checks them.
   */
  public static LeaseStore openOn(BlobServiceClient service, ElectionProperties properties) {
    checkLeaseDuration(properties);
    return storeOn(service.getBlobContainerClient(container(properties)), properties);
  }

  private static void checkLeaseDuration(ElectionProperties properties) {
    properties
        .duration(ElectionProperties.LEASE_DURATION)
        .ifPresent(
            d -> AzureBlobLeaseStore.checkLeaseDuration(ElectionProperties.LEASE_DURATION, d));
  }

  private static String container(ElectionProperties properties) {
    return checkContainerName(
        CONTAINER, properties.get(CONTAINER).orElse(AzureBlobLeaseStore.DEFAULT_CONTAINER));
  }

  private static LeaseStore storeOn(BlobContainerClient client, ElectionProperties properties) {
    return AzureBlobLeaseStore.builder(client)
        .callTimeout(CallTimeout.read(properties, CALL_TIMEOUT))
        .createContainer(properties.bool(CREATE_CONTAINER, false))
        .build();
  }

  /**
   * A container client builder on the JDK's HTTP client (no Netty), each request bounded by {@code
   * callTimeout}, one attempt per call: the elector, not the SDK, decides when to try again.
   */
  static BlobContainerClientBuilder clientBuilder(Duration callTimeout) {
    HttpClient http =
        new JdkHttpClientBuilder()
            .connectionTimeout(callTimeout)
            .responseTimeout(callTimeout)
            .readTimeout(callTimeout)
            .build();
    return new BlobContainerClientBuilder()
        .httpClient(http)
        .addPolicy(new ContentLengthForJdkClient())
        .retryOptions(
            new RequestRetryOptions(RetryPolicyType.FIXED, 1, (Integer) null, null, null, null));
  }

  static String checkContainerName(String key, String name) {
    if (!CONTAINER_NAME.matcher(name).matches()) {
      throw new ConfigurationException(
          key
              + ": '"
              + name
              + "' is not an Azure container name; use 3 to 63 lower-case letters, digits and"
              + " single '-', starting and ending with a letter or digit");
    }
    return name;
  }

  /** An http or https URL with a host, and no query: a SAS belongs in its own, secret, key. */
  static String endpoint(String value) {
    String rule =
        "; use the account's blob endpoint, such as https://myaccount.blob.core.windows.net"
            + " or http://127.0.0.1:10000/devstoreaccount1 for Azurite, and put the SAS in "
            + SAS_TOKEN;
    URI uri;
    try {
      uri = new URI(value);
    } catch (URISyntaxException e) {
      throw new ConfigurationException(
          ENDPOINT + ": " + ElectionProperties.shown(ENDPOINT, value) + " is not a URL" + rule);
    }
    if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
        || uri.getHost() == null
        || uri.getRawQuery() != null
        || uri.getRawUserInfo() != null
        || uri.getRawFragment() != null) {
      // A query may be a SAS: never show it.
      String shown =
          uri.getRawQuery() != null
              ? "'" + value.substring(0, value.indexOf('?')) + "?<hidden>'"
              : ElectionProperties.shown(ENDPOINT, value);
      throw new ConfigurationException(
          ENDPOINT + ": " + shown + " is not a bare blob endpoint" + rule);
    }
    return value;
  }
}
