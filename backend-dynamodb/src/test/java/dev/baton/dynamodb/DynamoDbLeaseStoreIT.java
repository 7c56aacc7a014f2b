package dev.baton.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.conformance.CapturedLog;
import dev.baton.election.Acquisition;
import dev.baton.election.ElectionProperties;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/**
 * The store against dynalite: the item it writes, contention, a missing table, the provider, and
 * fencing at a resource.
 */
class DynamoDbLeaseStoreIT {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final String TABLE = "baton-it";

  private static Dynalite dynalite;
  private static DynamoDbClient client;
  private static DynamoDbLeaseStore store;

  @BeforeAll
  static void start() {
    dynalite = Dynalite.start();
    client = Dynalite.client(dynalite.address(), CALL_TIMEOUT);
    store =
        DynamoDbLeaseStore.builder(client)
            .table(TABLE)
            .callTimeout(CALL_TIMEOUT)
            .createTable(true)
            .build();
  }

  @AfterAll
  static void stop() {
    if (store != null) {
      store.close();
    }
    if (client != null) {
      client.close();
    }
    if (dynalite != null) {
      dynalite.close();
    }
  }

  private static String newElection() {
    return "it-" + UUID.randomUUID();
  }

  private static Map<String, AttributeValue> item(String election) {
    return client
        .getItem(
            r ->
                r.tableName(TABLE)
                    .key(Map.of("election", AttributeValue.fromS(election)))
                    .consistentRead(true))
        .item();
  }

  @Test
  void oneItemPerElectionHoldsHolderTermLeaseDurationAndAVersionThatEveryWriteChanges() {
    String election = newElection();
    Lease first = store.tryAcquire(election, "a", TTL).lease().orElseThrow();
    Map<String, AttributeValue> granted = item(election);
    assertThat(granted.get("holder").s()).isEqualTo("a");
    assertThat(granted.get("term").n()).isEqualTo("0");
    assertThat(granted.get("leaseDurationSeconds").n()).isEqualTo("3");

    Lease renewed = store.renew(first);
    assertThat(item(election).get("version").s())
        .isNotEqualTo(granted.get("version").s())
        .isEqualTo(renewed.handle());

    store.release(renewed);
    Map<String, AttributeValue> released = item(election);
    assertThat(released).doesNotContainKey("holder");
    assertThat(released.get("term").n()).isEqualTo("0");

    Lease again = store.tryAcquire(election, "a", TTL).lease().orElseThrow();
    assertThat(again.token())
        .isEqualTo(FencingToken.of(1)); // +1 on every grant, also to the same holder
    assertThat(item(election).get("term").n()).isEqualTo("1");
  }

  @Test
  void candidatesRacingForOneItemGetOneGrantAndNoLogLineAboutTheirConflicts() {
    String election = newElection();
    List<DynamoDbLeaseStore> stores =
        IntStream.range(0, 4)
            .mapToObj(
                i ->
                    DynamoDbLeaseStore.builder(client)
                        .table(TABLE)
                        .callTimeout(CALL_TIMEOUT)
                        .build())
            .collect(Collectors.toList());
    try (CapturedLog log = CapturedLog.start()) {
      List<CompletableFuture<Acquisition>> attempts =
          IntStream.range(0, stores.size())
              .mapToObj(
                  i ->
                      CompletableFuture.supplyAsync(
                          () -> stores.get(i).tryAcquire(election, "c" + i, TTL)))
              .collect(Collectors.toList());
      List<Acquisition> results =
          attempts.stream().map(CompletableFuture::join).collect(Collectors.toList());

      assertThat(results.stream().filter(Acquisition::isGranted)).hasSize(1);
      String winner =
          results.stream()
              .filter(Acquisition::isGranted)
              .findFirst()
              .orElseThrow()
              .lease()
              .orElseThrow()
              .candidate();
      assertThat(results.stream().filter(a -> !a.isGranted()))
          .allSatisfy(a -> assertThat(a.holder().orElseThrow().holder()).isEqualTo(winner));
      assertThat(log.linesAtWarnOrAbove()).isEmpty();
      assertThat(log.text()).doesNotContain("ConditionalCheckFailed");
    } finally {
      stores.forEach(LeaseStore::close);
    }
  }

  @Test
  void aMissingTableIsNamedWithTheSettingThatCreatesIt() {
    try (DynamoDbLeaseStore noTable =
        DynamoDbLeaseStore.builder(client)
            .table("no-such-table")
            .callTimeout(CALL_TIMEOUT)
            .build()) {
      assertThatThrownBy(() -> noTable.tryAcquire(newElection(), "a", TTL))
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining("table no-such-table does not exist at http://127.0.0.1:")
          .hasMessageContaining("election.dynamodb.create-table=true");
    }
  }

  @Test
  void theProviderOpensAStoreOnTheEndpointCreatesItsTableAndShowsNoCredentials() {
    Properties p = new Properties();
    p.setProperty(ElectionProperties.BACKEND, "dynamodb");
    p.setProperty(
        DynamoDbLeaseStoreProvider.ENDPOINT, "http://127.0.0.1:" + dynalite.address().getPort());
    p.setProperty(DynamoDbLeaseStoreProvider.REGION, "eu-west-1");
    p.setProperty(DynamoDbLeaseStoreProvider.TABLE, "baton-provider-it");
    p.setProperty(DynamoDbLeaseStoreProvider.CREATE_TABLE, "true");
    // Credentials come from the AWS default chain: here its aws.* system properties (dynalite
    // wants requests signed but checks nothing).
    System.setProperty("aws.accessKeyId", "baton-test");
    System.setProperty("aws.secretAccessKey", "baton-test-secret");
    try (LeaseStore opened = ElectionProperties.of(p).openStore()) {
      assertThat(opened).isInstanceOf(DynamoDbLeaseStore.class);
      assertThat(opened.describe())
          .isEqualTo(
              "dynamodb (table baton-provider-it at http://127.0.0.1:"
                  + dynalite.address().getPort()
                  + ")");
      assertThat(opened.describe()).doesNotContain("baton-test");
      assertThat(opened.tryAcquire(newElection(), "a", TTL).isGranted()).isTrue();
    } finally {
      System.clearProperty("aws.accessKeyId");
      System.clearProperty("aws.secretAccessKey");
    }
  }

  /**
   * The fencing example of docs/dynamodb.md: the resource's own conditional write refuses a stale
   * token.
   */
  @Test
  void aCallersConditionalWriteRefusesAStaleToken() {
    client.createTable(
        r ->
            r.tableName("invoices")
                .attributeDefinitions(
                    AttributeDefinition.builder()
                        .attributeName("id")
                        .attributeType(ScalarAttributeType.S)
                        .build())
                .keySchema(
                    KeySchemaElement.builder().attributeName("id").keyType(KeyType.HASH).build())
                .billingMode(BillingMode.PAY_PER_REQUEST));
    Awaitility.await("until table invoices is active")
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                client.describeTable(r -> r.tableName("invoices")).table().tableStatus()
                    == TableStatus.ACTIVE);
    String election = newElection();
    Lease old = store.tryAcquire(election, "a", TTL).lease().orElseThrow();
    markPaid(client, "run-42", "paid by a", old.token());
    store.release(old);
    Lease newer = store.tryAcquire(election, "b", TTL).lease().orElseThrow();
    markPaid(client, "run-42", "paid by b", newer.token());

    assertThatThrownBy(() -> markPaid(client, "run-42", "late write of a", old.token()))
        .isInstanceOf(ConditionalCheckFailedException.class);
    assertThat(
            client
                .getItem(
                    r ->
                        r.tableName("invoices")
                            .key(Map.of("id", AttributeValue.fromS("run-42")))
                            .consistentRead(true))
                .item())
        .containsEntry("state", AttributeValue.fromS("paid by b"))
        .containsEntry("fencingToken", AttributeValue.fromN(Long.toString(newer.token().value())));
  }

  /** The example of docs/dynamodb.md, as it stands there. */
  static void markPaid(DynamoDbClient dynamo, String id, String state, FencingToken token) {
    dynamo.updateItem(
        r ->
            r.tableName("invoices")
                .key(Map.of("id", AttributeValue.fromS(id)))
                .updateExpression("SET #state = :state, #token = :token")
                .conditionExpression("attribute_not_exists(#token) OR #token <= :token")
                .expressionAttributeNames(Map.of("#state", "state", "#token", "fencingToken"))
                .expressionAttributeValues(
                    Map.of(
                        ":state", AttributeValue.fromS(state),
                        ":token", AttributeValue.fromN(Long.toString(token.value())))));
  }
}
