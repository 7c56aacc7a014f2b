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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import software.amazon.awssdk.awscore.AwsRequest;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * One call, one timeout: every call of the store ends within its call timeout, however many
 * requests it makes and however many times the caller's client retries them. The clients here keep
 * the SDK's default retry strategy and timeouts, as a caller's own client would; the server is a
 * {@link ScriptedDynamoDb} on loopback.
 *
 * <p>What is checked is the budget each request is sent with, as the client's own interceptor sees
 * it: the first request of a call gets at most the call timeout, and each later one at most what
 * the earlier ones left. The SDK ends a request at its budget, its retries included. That holds
 * however busy the machine is; the wall time of each call is printed, not asserted (on a machine
 * busy with other builds a 1 s call was once measured at 1.7 s, the SDK's timers firing late).
 */
class DynamoDbCallTimeoutTest {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);

  private static final Duration TTL = Duration.ofSeconds(30);
  private static final String TABLE = "baton-timeouts";
  private static final String ACTIVE_TABLE =
      "{\"Table\":{\"TableName\":\"" + TABLE + "\",\"TableStatus\":\"ACTIVE\"}}";

  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final Requests requests = new Requests();

  /**
   * One request as the client saw it: when it began and ended, and the timeout it was sent with.
   */
  private record Request(String operation, long beganNanos, long endedNanos, Duration timeout) {}

  /** Records every request the client sends (one entry per request, its retries included). */
  private static final class Requests implements ExecutionInterceptor {
    private static final ExecutionAttribute<Long> BEGAN = new ExecutionAttribute<>("baton.began");
    private final List<Request> seen = new CopyOnWriteArrayList<>();

    @Override
    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
      attributes.putAttribute(BEGAN, System.nanoTime());
    }

    @Override
    public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
      ended(context.request(), attributes);
    }

    @Override
    public void onExecutionFailure(
        Context.FailedExecution context, ExecutionAttributes attributes) {
      ended(context.request(), attributes);
    }

    private void ended(SdkRequest request, ExecutionAttributes attributes) {
      Duration timeout =
          request instanceof AwsRequest aws
              ? aws.overrideConfiguration()
                  .flatMap(AwsRequestOverrideConfiguration::apiCallTimeout)
                  .orElse(null)
              : null;
      seen.add(
          new Request(
              request.getClass().getSimpleName(),
              attributes.getAttribute(BEGAN),
              System.nanoTime(),
              timeout));
    }

    /** Forgets what was seen: the next call's requests start a new list. */
    void clear() {
      seen.clear();
    }

    /**
     * The requests of one call each got the time its earlier requests left: the store took its
     * deadline before the first began, and computed each later budget after the one before ended.
     */
    void assertOneCallTimeout(String what) {
      List<Request> all = List.copyOf(seen);
      assertThat(all).as("requests of %s", what).isNotEmpty();
      long began = all.get(0).beganNanos();
      for (int i = 0; i < all.size(); i++) {
        Request r = all.get(i);
        Duration spent = Duration.ofNanos(i == 0 ? 0 : all.get(i - 1).endedNanos() - began);
        assertThat(r.timeout())
            .as(
                "the timeout of request %d (%s) of %s, after %d ms spent by the earlier ones",
                i + 1, r.operation(), what, spent.toMillis())
            .isNotNull()
            .isLessThanOrEqualTo(CALL_TIMEOUT.minus(spent));
      }
    }
  }

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
            .overrideConfiguration(c -> c.addExecutionInterceptor(requests))
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

    requests.clear();
    long renewal = millisOf(() -> store.renew(lease("v1")));
    System.out.println("DynamoDB: a renewal of three requests of 600 ms each: " + renewal + " ms");
    requests.assertOneCallTimeout("a renewal of three slow requests");
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

    requests.clear();
    long campaign = millisOf(() -> store.tryAcquire("e", "a", TTL));
    System.out.println(
        "DynamoDB: a campaign of up to four requests of 600 ms each: "
            + campaign
            + " ms, requests "
            + server.operations());
    requests.assertOneCallTimeout("a campaign of slow requests");
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
        requests.clear();
        long millis = failsAfter(call);
        System.out.println(
            "DynamoDB: a call answered "
                + retryable.status()
                + " every time failed after "
                + millis
                + " ms");
        requests.assertOneCallTimeout("a call answered " + retryable.json() + " every time");
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
      requests.clear();
      long t0 = System.nanoTime();
      assertThatThrownBy(call::execute)
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining("127.0.0.1");
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      System.out.println(
          "DynamoDB: a call to a server that never answers failed after "
              + took.toMillis()
              + " ms");
      requests.assertOneCallTimeout("a call to a server that never answers");
    }
  }
}
