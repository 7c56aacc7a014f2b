package dev.baton.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.dynamodb.ScriptedDynamoDb.Answer;
import dev.baton.election.ConfigurationException;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * One call, one timeout: every call of the store ends within its call timeout, however many
 * requests it makes and however many times the caller's client retries them. The clients here keep
 * the SDK's default retry strategy and timeouts, as a caller's own client would; the server is a
 * {@link ScriptedDynamoDb} on loopback.
 */
class DynamoDbCallTimeoutTest {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);

  /** Generous for a loaded machine, and still below what the old code took (1.8 s and more). */
  private static final Duration BOUND = CALL_TIMEOUT.multipliedBy(3).dividedBy(2);

  private static final Duration TTL = Duration.ofSeconds(30);
  private static final String TABLE = "baton-timeouts";
  private static final String ACTIVE_TABLE =
      "{\"Table\":{\"TableName\":\"" + TABLE + "\",\"TableStatus\":\"ACTIVE\"}}";

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private ScriptedDynamoDb server(BiFunction<String, String, Answer> items) {
    ScriptedDynamoDb server =
        ScriptedDynamoDb.start(
            (operation, body) ->
                operation.equals("DescribeTable")
                    ? Answer.ok(ACTIVE_TABLE)
                    : items.apply(operation, body));
    toClose.add(server);
    return server;
  }

  /** A store on a client with the SDK's defaults: its retry strategy, no timeouts of its own. */
  private LeaseStore storeOn(ScriptedDynamoDb server) {
    DynamoDbClient client =
        DynamoDbClient.builder()
            .endpointOverride(URI.create("http://127.0.0.1:" + server.address().getPort()))
            .region(Region.US_EAST_1)
            .credentialsProvider(Dynalite.CREDENTIALS)
            .httpClientBuilder(UrlConnectionHttpClient.builder())
            .build();
    toClose.add(client);
    LeaseStore store =
        DynamoDbLeaseStore.builder(client).table(TABLE).callTimeout(CALL_TIMEOUT).build();
    toClose.add(store);
    return store;
  }

  private static Lease lease(String handle) {
    return new Lease("e", "a", FencingToken.of(0), TTL, handle);
  }

  private static String item(String holder, String version) {
    return "{\"Item\":{\"election\":{\"S\":\"e\"},"
        + (holder.isEmpty() ? "" : "\"holder\":{\"S\":\"" + holder + "\"},")
        + "\"term\":{\"N\":\"0\"},\"leaseDurationSeconds\":{\"N\":\"30\"},"
        + "\"acquireTime\":{\"S\":\"2026-01-01T00:00:00Z\"},"
        + "\"renewTime\":{\"S\":\"2026-01-01T00:00:00Z\"},"
        + "\"version\":{\"S\":\""
        + version
        + "\"}}}";
  }

  /** How long {@code call} took to fail with a LeaseStoreException, in milliseconds. */
  private static long failsAfter(Executable call) {
    long t0 = System.nanoTime();
    assertThatThrownBy(call::execute).isInstanceOf(LeaseStoreException.class);
    return Duration.ofNanos(System.nanoTime() - t0).toMillis();
  }

  /** How long {@code call} took to return or fail with a LeaseStoreException, in milliseconds. */
  private static long millisOf(Executable call) {
    long t0 = System.nanoTime();
    try {
      call.execute();
    } catch (Throwable e) {
      assertThat(e).isInstanceOf(LeaseStoreException.class);
    }
    return Duration.ofNanos(System.nanoTime() - t0).toMillis();
  }

  /**
   * Failed first on the old code, where each request had a call timeout of its own: the renewal
   * (refused, read, written again) succeeded after 1.8 s and more, the campaign (create refused,
   * read, replace refused, read) ended after 2.4 s and more.
   */
  @Test
  void aCallOfSeveralSlowRequestsEndsWithinOneCallTimeout() {
    Duration slow = CALL_TIMEOUT.multipliedBy(6).dividedBy(10);
    ScriptedDynamoDb server =
        server(
            (operation, body) ->
                switch (operation) {
                  // The lease's handle is v1, but the item is at v2, still naming holder a and term
                  // 0: a renewal of a's that was applied late, so the renewal reads and writes
                  // again.
                  case "UpdateItem" ->
                      (body.contains("\"v1\"")
                              ? Answer.error(400, "ConditionalCheckFailedException")
                              : Answer.ok("{}"))
                          .after(slow);
                  case "GetItem" -> Answer.ok(item("a", "v2")).after(slow);
                  default -> Answer.error(400, "ConditionalCheckFailedException").after(slow);
                });
    LeaseStore store = storeOn(server);

    long renewal = millisOf(() -> store.renew(lease("v1")));
    System.out.println("DynamoDB: a renewal of three requests of 600 ms each: " + renewal + " ms");
    assertThat(renewal).as("ms of a renewal of three slow requests").isLessThan(BOUND.toMillis());
  }

  @Test
  void aCampaignThatKeepsLosingSlowRacesEndsWithinOneCallTimeout() {
    Duration slow = CALL_TIMEOUT.multipliedBy(6).dividedBy(10);
    // Every write is refused and every read shows the item released: the store tries again.
    ScriptedDynamoDb server =
        server(
            (operation, body) ->
                (operation.equals("GetItem")
                        ? Answer.ok(item("", "v" + System.nanoTime()))
                        : Answer.error(400, "ConditionalCheckFailedException"))
                    .after(slow));
    LeaseStore store = storeOn(server);

    long campaign = millisOf(() -> store.tryAcquire("e", "a", TTL));
    System.out.println(
        "DynamoDB: a campaign of up to four requests of 600 ms each: "
            + campaign
            + " ms, requests "
            + server.operations());
    assertThat(campaign).as("ms of a campaign of slow requests").isLessThan(BOUND.toMillis());
  }

  @Test
  void everyRequestAnsweredWithARetryableErrorFailsEachCallWithinTheCallTimeout() {
    for (Answer retryable :
        List.of(
            Answer.error(500, "InternalServerError"),
            Answer.error(400, "ProvisionedThroughputExceededException"),
            Answer.error(400, "ThrottlingException"))) {
      ScriptedDynamoDb server = server((operation, body) -> retryable);
      LeaseStore store = storeOn(server);

      for (Executable call :
          List.<Executable>of(
              () -> store.tryAcquire("e", "a", TTL),
              () -> store.read("e"),
              () -> store.renew(lease("v1")),
              () -> store.release(lease("v1")))) {
        long millis = failsAfter(call);
        System.out.println(
            "DynamoDB: a call answered "
                + retryable.status()
                + " every time failed after "
                + millis
                + " ms");
        assertThat(millis)
            .as("ms of a call answered %s every time", retryable.json())
            .isLessThan(BOUND.toMillis());
      }
      assertThat(server.operations().stream().filter(o -> o.equals("GetItem")).count())
          .as("the SDK retried within the call timeout: %s", server.operations())
          .isGreaterThan(1);
    }
  }

  /**
   * A process may start while DynamoDB does not answer: the store is built, and its first call
   * checks the table instead, refusing a global table then.
   */
  @Test
  void aTableThatCannotBeDescribedWhenTheStoreIsBuiltIsCheckedByItsFirstCall() {
    AtomicBoolean answering = new AtomicBoolean();
    ScriptedDynamoDb server =
        ScriptedDynamoDb.start(
            (operation, body) ->
                !answering.get()
                    ? Answer.error(500, "InternalServerError")
                    : operation.equals("DescribeTable")
                        ? Answer.ok(
                            "{\"Table\":{\"TableName\":\""
                                + TABLE
                                + "\",\"TableStatus\":\"ACTIVE\",\"GlobalTableVersion\":\"2019.11.21\","
                                + "\"Replicas\":[{\"RegionName\":\"eu-west-1\"}]}}")
                        : Answer.ok("{}"));
    toClose.add(server);
    LeaseStore store = storeOn(server);
    answering.set(true);

    assertThatThrownBy(() -> store.tryAcquire("e", "a", TTL))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("is a global table (version 2019.11.21, replicas in [eu-west-1])");
    assertThat(server.operations()).doesNotContain("PutItem", "UpdateItem");
  }

  @Test
  void anUnansweringServerFailsEachCallWithinTheCallTimeout() {
    ScriptedDynamoDb server =
        server((operation, body) -> Answer.ok("{}").after(Duration.ofSeconds(60)));
    LeaseStore store = storeOn(server);

    for (Executable call :
        List.<Executable>of(
            () -> store.tryAcquire("e", "a", TTL),
            () -> store.read("e"),
            () -> store.renew(lease("v1")),
            () -> store.release(lease("v1")))) {
      long t0 = System.nanoTime();
      assertThatThrownBy(call::execute)
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining("127.0.0.1");
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      System.out.println(
          "DynamoDB: a call to a server that never answers failed after "
              + took.toMillis()
              + " ms");
      assertThat(took).as("a call to a server that never answers").isLessThan(BOUND);
    }
  }
}
