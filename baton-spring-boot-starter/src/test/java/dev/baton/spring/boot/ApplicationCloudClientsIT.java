package dev.baton.spring.boot;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import dev.baton.conformance.NpmServer;
import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import java.net.URI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * With no server keys of their own, the DynamoDB and Azure Blob stores run on the client the
 * application declares (as Spring Cloud AWS and Spring Cloud Azure declare theirs), with the
 * client's own retry policy, and leave it open. On dynalite and Azurite.
 */
class ApplicationCloudClientsIT {

  /** Azurite's well-known development account and key, published in its README. */
  private static final String AZURITE_ACCOUNT = "devstoreaccount1";

  private static final String AZURITE_KEY =
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

  static NpmServer dynalite;
  static NpmServer azurite;

  @BeforeAll
  static void startServers() {
    dynalite = NpmServer.dynalite();
    azurite = NpmServer.azuriteBlob();
  }

  @AfterAll
  static void stopServers() {
    if (dynalite != null) {
      dynalite.close();
    }
    if (azurite != null) {
      azurite.close();
    }
  }

  @SpringBootConfiguration
  @ImportAutoConfiguration(BatonAutoConfiguration.class)
  static class DynamoDbApp {
    /** The SDK's defaults (its retry strategy, no timeouts), as an application's client has. */
    @Bean(destroyMethod = "close")
    DynamoDbClient dynamoDbClient() {
      return DynamoDbClient.builder()
          .endpointOverride(URI.create("http://127.0.0.1:" + dynalite.address().getPort()))
          .region(Region.US_EAST_1)
          .credentialsProvider(
              StaticCredentialsProvider.create(AwsBasicCredentials.create("app", "app")))
          .httpClientBuilder(UrlConnectionHttpClient.builder())
          .build();
    }
  }

  @SpringBootConfiguration
  @ImportAutoConfiguration(BatonAutoConfiguration.class)
  static class AzureBlobApp {
    @Bean
    BlobServiceClient blobServiceClient() {
      return new BlobServiceClientBuilder()
          .connectionString(
              "DefaultEndpointsProtocol=http;AccountName="
                  + AZURITE_ACCOUNT
                  + ";AccountKey="
                  + AZURITE_KEY
                  + ";BlobEndpoint=http://127.0.0.1:"
                  + azurite.address().getPort()
                  + "/"
                  + AZURITE_ACCOUNT
                  + ";")
          .buildClient();
    }
  }

  private static ConfigurableApplicationContext start(Class<?> app, String... properties) {
    return new SpringApplicationBuilder(app)
        .web(WebApplicationType.NONE)
        .properties(properties)
        .properties(
            "election.name=cloud-" + System.nanoTime(),
            "election.lease-duration=15s",
            "election.renew-deadline=10s",
            "election.retry-period=2s")
        .run();
  }

  @Test
  @DisplayName(
      "election.backend=dynamodb without region or endpoint leads on the application's client")
  void dynamoDbOnTheApplicationsClient() {
    ConfigurableApplicationContext c =
        start(
            DynamoDbApp.class,
            "election.backend=dynamodb",
            "election.dynamodb.table=app-elections",
            "election.dynamodb.create-table=true");
    DynamoDbClient client = c.getBean(DynamoDbClient.class);
    try {
      assertThat(c.getBean(LeaseStore.class).describe()).contains("app-elections");
      await().atMost(30, SECONDS).until(c.getBean(Elector.class)::isLeader);
      c.getBean(LeaseStore.class).close();
      assertThat(client.listTables().tableNames())
          .as("the store never closes a client it was given")
          .contains("app-elections");
    } finally {
      c.close();
    }
  }

  @Test
  @DisplayName(
      "election.backend=azure-blob without a connection string leads on the application's client")
  void azureBlobOnTheApplicationsClient() {
    ConfigurableApplicationContext c =
        start(
            AzureBlobApp.class,
            "election.backend=azure-blob",
            "election.azure-blob.container=app-elections",
            "election.azure-blob.create-container=true");
    BlobServiceClient client = c.getBean(BlobServiceClient.class);
    try {
      assertThat(c.getBean(LeaseStore.class).describe()).contains("app-elections");
      await().atMost(30, SECONDS).until(c.getBean(Elector.class)::isLeader);
      c.getBean(LeaseStore.class).close();
      assertThat(client.getBlobContainerClient("app-elections").exists())
          .as("the store never closes a client it was given")
          .isTrue();
    } finally {
      c.close();
    }
  }
}
