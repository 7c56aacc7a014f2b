package dev.baton.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.conformance.CapturedLog;
import dev.baton.conformance.FaultProxy;
import dev.baton.conformance.StopAfterUnansweredGrant;
import dev.baton.election.Acquisition;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
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
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ReplicaDescription;
import software.amazon.awssdk.services.dynamodb.model.ReplicaStatus;
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

  /** Far longer than any handover the tests measure: a wait for it would show. */
  private static final Duration LONG_TTL = Duration.ofSeconds(30);

  private static final Duration SHORT_CALL = Duration.ofMillis(500);

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

  /** A store whose client reaches dynalite through {@code proxy}, with a short call timeout. */
  private static DynamoDbLeaseStore throughProxy(FaultProxy proxy, List<AutoCloseable> toClose) {
    DynamoDbClient proxied = Dynalite.client(proxy.address(), SHORT_CALL);
    toClose.add(proxied);
    DynamoDbLeaseStore s =
        DynamoDbLeaseStore.builder(proxied).table(TABLE).callTimeout(SHORT_CALL).build();
    toClose.add(0, s);
    return s;
  }

  /** Waits until the item's version is no longer {@code before}: a write the server applied. */
  private static void awaitVersionChangedFrom(String election, String before) {
    Awaitility.await("until dynalite applied the write whose answer was held")
        .atMost(Duration.ofSeconds(20))
        .until(() -> !before.equals(String.valueOf(item(election).get("version"))));
  }

  @Test
  void aReleaseAfterARenewalTheServerAppliedLateHandsOverAtOnce() throws Exception {
    String election = newElection();
    List<AutoCloseable> toClose = new ArrayList<>();
    try (FaultProxy proxy = FaultProxy.start(dynalite.address())) {
      DynamoDbLeaseStore a = throughProxy(proxy, toClose);
      Lease lease = a.tryAcquire(election, "a", LONG_TTL).lease().orElseThrow();
      String before = String.valueOf(item(election).get("version"));

      proxy.stopReadingAnswers();
      assertThatThrownBy(() -> a.renew(lease)).isInstanceOf(LeaseStoreException.class);
      awaitVersionChangedFrom(election, before);
      proxy.heal();

      long t0 = System.nanoTime();
      a.release(lease); // the lease's handle is the version before the late renewal
      Acquisition next = store.tryAcquire(election, "b", LONG_TTL);
      long handover = System.nanoTime() - t0;
      System.out.println(
          "DynamoDB: release after a renewal applied late, then another store granted: "
              + Duration.ofNanos(handover).toMillis()
              + " ms (lease "
              + LONG_TTL.toSeconds()
              + " s)");
      assertThat(next.isGranted())
          .as("another store granted at once after the release: %s", next)
          .isTrue();
      assertThat(next.lease().orElseThrow().token().isNewerThan(lease.token())).isTrue();
    } finally {
      closeAll(toClose);
    }
  }

  @Test
  void aGrantTheServerAppliedAfterTheCallerGaveUpIsTheCandidatesOwnOnItsNextTry() throws Exception {
    String election = newElection();
    List<AutoCloseable> toClose = new ArrayList<>();
    try (FaultProxy proxy = FaultProxy.start(dynalite.address())) {
      DynamoDbLeaseStore a = throughProxy(proxy, toClose);

      // A store that knows nothing of the election creates the item at once: one request.
      proxy.stopReadingAnswers();
      assertThatThrownBy(() -> a.tryAcquire(election, "a", LONG_TTL))
          .isInstanceOf(LeaseStoreException.class);
      awaitVersionChangedFrom(election, "null");
      assertThat(item(election).get("holder").s()).isEqualTo("a");
      proxy.heal();

      long t0 = System.nanoTime();
      Acquisition again = a.tryAcquire(election, "a", LONG_TTL);
      assertThat(again.isGranted())
          .as("the candidate's next try after its own grant applied late: %s", again)
          .isTrue();
      Lease lease = again.lease().orElseThrow();
      a.release(lease);
      Acquisition next = store.tryAcquire(election, "b", LONG_TTL);
      System.out.println(
          "DynamoDB: a grant applied late, taken again, released, another store granted: "
              + Duration.ofNanos(System.nanoTime() - t0).toMillis()
              + " ms (lease "
              + LONG_TTL.toSeconds()
              + " s)");
      assertThat(next.isGranted()).as("another store granted after the release: %s", next).isTrue();
      assertThat(next.lease().orElseThrow().token().isNewerThan(lease.token())).isTrue();
    } finally {
      closeAll(toClose);
    }
  }

  @Test
  void anElectorClosedAfterAGrantWithNoAnswerHandsOverAtOnce() throws Exception {
    String election = newElection();
    List<AutoCloseable> toClose = new ArrayList<>();
    try (FaultProxy proxy = FaultProxy.start(dynalite.address())) {
      StopAfterUnansweredGrant.Handover handover =
          StopAfterUnansweredGrant.run(
              throughProxy(proxy, toClose),
              proxy,
              store,
              election,
              LONG_TTL,
              () -> !item(election).isEmpty() && "a".equals(item(election).get("holder").s()));
      System.out.println(
          "DynamoDB: elector closed after a grant with no answer, another store granted: "
              + handover.closeToGrant().toMillis()
              + " ms (lease "
              + LONG_TTL.toSeconds()
              + " s)");
      assertThat(handover.next().token()).isEqualTo(FencingToken.of(1));
    } finally {
      closeAll(toClose);
    }
  }

  @Test
  void aRenewalTheServerAppliedAfterTheClientGaveUpDoesNotEndTheTerm() throws Exception {
    String election = newElection();
    List<AutoCloseable> toClose = new ArrayList<>();
    try (FaultProxy proxy = FaultProxy.start(dynalite.address())) {
      DynamoDbLeaseStore a = throughProxy(proxy, toClose);
      Lease lease = a.tryAcquire(election, "a", LONG_TTL).lease().orElseThrow();
      String before = String.valueOf(item(election).get("version"));

      proxy.stopReadingAnswers();
      assertThatThrownBy(() -> a.renew(lease)).isInstanceOf(LeaseStoreException.class);
      awaitVersionChangedFrom(election, before);
      proxy.heal();

      Lease renewed = a.renew(lease);
      assertThat(renewed.token()).as("the same term").isEqualTo(lease.token());
      assertThat(item(election).get("holder").s()).isEqualTo("a");
      assertThat(a.renew(renewed).token()).isEqualTo(lease.token());
      assertThat(store.tryAcquire(election, "b", LONG_TTL).isGranted()).isFalse();
    } finally {
      closeAll(toClose);
    }
  }

  private static void closeAll(List<AutoCloseable> toClose) throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
  }

  /**
   * dynalite cannot make replicas: an interceptor on the test's client adds one to every
   * DescribeTable answer, as DynamoDB shows a global table (version 2019.11.21).
   */
  @Test
  void aGlobalTableIsRefusedWhenTheStoreIsBuiltUnlessAllowed() {
    ExecutionInterceptor replicated =
        new ExecutionInterceptor() {
          @Override
          public SdkResponse modifyResponse(
              Context.ModifyResponse context, ExecutionAttributes attributes) {
            if (context.response() instanceof DescribeTableResponse r) {
              return r.toBuilder()
                  .table(
                      r.table().toBuilder()
                          .globalTableVersion("2019.11.21")
                          .replicas(
                              ReplicaDescription.builder()
                                  .regionName("eu-west-1")
                                  .replicaStatus(ReplicaStatus.ACTIVE)
                                  .build(),
                              ReplicaDescription.builder()
                                  .regionName("us-east-1")
                                  .replicaStatus(ReplicaStatus.ACTIVE)
                                  .build())
                          .build())
                  .build();
            }
            return context.response();
          }
        };
    try (DynamoDbClient global =
        DynamoDbClient.builder()
            .endpointOverride(URI.create("http://127.0.0.1:" + dynalite.address().getPort()))
            .region(Region.US_EAST_1)
            .credentialsProvider(Dynalite.CREDENTIALS)
            .httpClient(UrlConnectionHttpClient.create())
            .overrideConfiguration(c -> c.addExecutionInterceptor(replicated))
            .build()) {
      assertThatThrownBy(
              () ->
                  DynamoDbLeaseStore.builder(global).table(TABLE).callTimeout(CALL_TIMEOUT).build())
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("table " + TABLE + " at http://127.0.0.1:")
          .hasMessageContaining(
              "is a global table (version 2019.11.21, replicas in [eu-west-1, us-east-1])")
          .hasMessageContaining("only within one region")
          .hasMessageContaining("allowGlobalTable=true");

      try (DynamoDbLeaseStore allowed =
          DynamoDbLeaseStore.builder(global)
              .table(TABLE)
              .callTimeout(CALL_TIMEOUT)
              .allowGlobalTable(true)
              .build()) {
        assertThat(allowed.tryAcquire(newElection(), "a", TTL).isGranted()).isTrue();
      }
    }
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
