package dev.baton.dynamodb;

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
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;

/**
 * {@code election.backend=dynamodb}: builds a DynamoDB client with credentials from the AWS default
 * chain (environment, system properties, profile files, container and instance roles; never
 * logged), and closes it with the store.
 *
 * <ul>
 *   <li>{@code election.dynamodb.table}: the table of the election items; default {@value
 *       DynamoDbLeaseStore#DEFAULT_TABLE}
 *   <li>{@code election.dynamodb.region}: default: the AWS default chain ({@code AWS_REGION}, the
 *       profile's region, ...)
 *   <li>{@code election.dynamodb.endpoint}: an {@code http(s)://host[:port]} to use instead of the
 *       region's (a VPC endpoint, a local test server); default: the region's
 *   <li>{@code election.dynamodb.call-timeout}: the longest one request may take; at most half of
 *       {@code election.renew-deadline}; default half of it, at most 3s ({@link CallTimeout})
 *   <li>{@code election.dynamodb.create-table}: {@code true} to create the table when it is missing
 *       (needs dynamodb:CreateTable); default {@code false}
 *   <li>{@code election.dynamodb.allow-global-table}: {@code true} to accept a table with replicas
 *       in other regions, which is refused by default (conditional writes hold only within one
 *       region); only when every candidate goes to the same region; default {@code false}
 * </ul>
 */
public final class DynamoDbLeaseStoreProvider implements LeaseStoreProvider {

  public static final String NAME = "dynamodb";
  public static final String TABLE = "election.dynamodb.table";
  public static final String REGION = "election.dynamodb.region";
  public static final String ENDPOINT = "election.dynamodb.endpoint";
  public static final String CALL_TIMEOUT = "election.dynamodb.call-timeout";
  public static final String CREATE_TABLE = "election.dynamodb.create-table";
  public static final String ALLOW_GLOBAL_TABLE = "election.dynamodb.allow-global-table";

  private static final Pattern REGION_NAME = Pattern.compile("[a-z0-9]+(-[a-z0-9]+)+");

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of(TABLE, REGION, ENDPOINT, CALL_TIMEOUT, CREATE_TABLE, ALLOW_GLOBAL_TABLE);
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    Duration callTimeout = CallTimeout.read(properties, CALL_TIMEOUT);
    String table = properties.get(TABLE).orElse(DynamoDbLeaseStore.DEFAULT_TABLE);
    Region region = region(properties.get(REGION));
    Optional<URI> endpoint = properties.get(ENDPOINT).map(DynamoDbLeaseStoreProvider::endpoint);
    DynamoDbLeaseStore.checkTableName(
        TABLE, table); // before a client exists, so a bad name leaves nothing to close
    DynamoDbClientBuilder builder =
        DynamoDbClient.builder()
            .region(region)
            .credentialsProvider(DefaultCredentialsProvider.builder().build())
            .httpClientBuilder(
                UrlConnectionHttpClient.builder()
                    .connectionTimeout(callTimeout)
                    .socketTimeout(callTimeout))
            // One attempt per call: the elector, not the SDK, decides when to try again.
            .overrideConfiguration(
                c ->
                    c.retryStrategy(AwsRetryStrategy.doNotRetry())
                        .apiCallTimeout(callTimeout)
                        .apiCallAttemptTimeout(callTimeout));
    endpoint.ifPresent(builder::endpointOverride);
    DynamoDbClient client = builder.build();
    try {
      return storeOn(client, properties).closesClient().build();
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  /**
   * A store on a client the application built itself (its region, credentials and retry policy, as
   * Spring Cloud AWS declares one), with this backend's store keys ({@value #TABLE}, {@value
   * #CREATE_TABLE}, {@value #ALLOW_GLOBAL_TABLE}, {@value #CALL_TIMEOUT}) read as {@link #open}
   * reads them. The call timeout bounds each call, the client's own retries included. Closing the
   * store leaves the client open: it is the caller's.
   */
  public static LeaseStore openOn(DynamoDbClient client, ElectionProperties properties) {
    return storeOn(client, properties).build();
  }

  private static DynamoDbLeaseStore.Builder storeOn(
      DynamoDbClient client, ElectionProperties properties) {
    return DynamoDbLeaseStore.builder(client)
        .table(properties.get(TABLE).orElse(DynamoDbLeaseStore.DEFAULT_TABLE))
        .callTimeout(CallTimeout.read(properties, CALL_TIMEOUT))
        .createTable(properties.bool(CREATE_TABLE, false))
        .allowGlobalTable(properties.bool(ALLOW_GLOBAL_TABLE, false));
  }

  private static Region region(Optional<String> configured) {
    if (configured.isPresent()) {
      if (!REGION_NAME.matcher(configured.get()).matches()) {
        throw new ConfigurationException(
            REGION
                + ": '"
                + configured.get()
                + "' is not an AWS region name; use one such as eu-west-1");
      }
      return Region.of(configured.get());
    }
    try {
      return DefaultAwsRegionProviderChain.builder().build().getRegion();
    } catch (SdkClientException e) {
      throw new ConfigurationException(
          REGION
              + " is not set and the AWS default chain found no region (AWS_REGION, the profile's region); set one, such as eu-west-1");
    }
  }

  /**
   * An http or https URI with a host and nothing after the port: what the SDK sends requests to.
   */
  static URI endpoint(String value) {
    String rule =
        "; use http(s)://host[:port], such as http://127.0.0.1:8000 or https://dynamodb.eu-west-1.amazonaws.com";
    URI uri;
    try {
      uri = new URI(value);
    } catch (URISyntaxException e) {
      throw new ConfigurationException(
          ENDPOINT + ": " + ElectionProperties.shown(ENDPOINT, value) + " is not a URI" + rule);
    }
    boolean bare =
        uri.getRawUserInfo() == null
            && uri.getRawQuery() == null
            && uri.getRawFragment() == null
            && (uri.getRawPath() == null
                || uri.getRawPath().isEmpty()
                || uri.getRawPath().equals("/"));
    if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
        || uri.getHost() == null
        || !bare) {
      throw new ConfigurationException(
          ENDPOINT
              + ": "
              + ElectionProperties.shown(ENDPOINT, value)
              + " is not a bare endpoint"
              + rule);
    }
    return uri;
  }
}
