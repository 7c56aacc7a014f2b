package dev.baton.dynamodb;

import dev.baton.conformance.FreezableServer;
import dev.baton.conformance.NpmServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A dynalite server (npm, Apache-2.0; in memory) on a free loopback port, from the copy {@code
 * scripts/test} installs with {@code npm ci} in {@code tools/dynalite} ({@link NpmServer}).
 */
final class Dynalite implements FreezableServer, AutoCloseable {

  /** dynalite wants credentials of SigV4's shape but checks nothing. */
  static final StaticCredentialsProvider CREDENTIALS =
      StaticCredentialsProvider.create(AwsBasicCredentials.create("baton-test", "baton-test"));

  private final NpmServer server;

  private Dynalite(NpmServer server) {
    this.server = server;
  }

  static Dynalite start() {
    return new Dynalite(NpmServer.dynalite());
  }

  InetSocketAddress address() {
    return server.address();
  }

  /** A client of the server at {@code address} (the server's own, or a proxy's), no retries. */
  static DynamoDbClient client(InetSocketAddress address, Duration callTimeout) {
    return DynamoDbClient.builder()
        .endpointOverride(URI.create("http://127.0.0.1:" + address.getPort()))
        .region(Region.US_EAST_1)
        .credentialsProvider(CREDENTIALS)
        .httpClientBuilder(
            UrlConnectionHttpClient.builder()
                .connectionTimeout(callTimeout)
                .socketTimeout(callTimeout))
        .overrideConfiguration(c -> c.retryStrategy(AwsRetryStrategy.doNotRetry()))
        .build();
  }

  /** SIGSTOP on dynalite's process: it hangs with its sockets open. */
  @Override
  public void freeze() {
    server.freeze();
  }

  @Override
  public void thaw() {
    server.thaw();
  }

  @Override
  public String toString() {
    return server.toString();
  }

  @Override
  public void close() {
    server.close();
  }
}
