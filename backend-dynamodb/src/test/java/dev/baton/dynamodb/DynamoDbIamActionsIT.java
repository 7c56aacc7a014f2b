package dev.baton.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The IAM actions docs/dynamodb.md lists are exactly those the store uses: a store goes through a
 * whole life on dynalite (which checks no IAM) with an interceptor that records every operation
 * sent, and the test compares them with the doc's table, read from the doc itself.
 */
class DynamoDbIamActionsIT {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration TTL = Duration.ofSeconds(5);

  /** A row of the doc's table: | `dynamodb:Action` | when it is needed | why |. */
  private static final Pattern ROW = Pattern.compile("^\\| `dynamodb:(\\w+)` \\| ([^|]+) \\|");

  private static Dynalite dynalite;

  @BeforeAll
  static void start() {
    dynalite = Dynalite.start();
  }

  @AfterAll
  static void stop() {
    if (dynalite != null) {
      dynalite.close();
    }
  }

  /** What the doc says the store needs with these settings. */
  private static Set<String> documentedActions(boolean createTable, boolean allowGlobalTable)
      throws IOException {
    Path doc = Path.of("..", "docs", "dynamodb.md");
    String text = Files.readString(doc);
    String section = text.substring(text.indexOf("## Least privilege"));
    section = section.substring(0, section.indexOf("\n## ", 1));
    Set<String> actions = new TreeSet<>();
    int rows = 0;
    for (String line : section.split("\n")) {
      Matcher m = ROW.matcher(line);
      if (!m.find()) {
        continue;
      }
      rows++;
      String when = m.group(2).trim();
      boolean needed =
          switch (when) {
            case "always" -> true;
            case "unless `allow-global-table=true`" -> !allowGlobalTable;
            case "only with `create-table=true`" -> createTable;
            default ->
                throw new AssertionError(
                    "docs/dynamodb.md: a condition this test cannot read: " + line);
          };
      if (needed) {
        actions.add(m.group(1));
      }
    }
    assertThat(rows).as("rows of the table in %s", doc).isGreaterThanOrEqualTo(3);
    return actions;
  }

  @ParameterizedTest(name = "create-table {0}, allow-global-table {1}")
  @CsvSource({"true,false", "false,false", "false,true"})
  void aWholeLifeUsesExactlyTheDocumentedActions(boolean createTable, boolean allowGlobalTable)
      throws IOException {
    String table = "iam-" + UUID.randomUUID();
    if (!createTable) {
      try (DynamoDbClient setup = client(new ConcurrentSkipListSet<>())) {
        DynamoDbLeaseStore.builder(setup).table(table).createTable(true).build().close();
      }
    }
    Set<String> sent = new ConcurrentSkipListSet<>();
    try (DynamoDbClient recorded = client(sent)) {
      LeaseStore a = build(recorded, table, createTable, allowGlobalTable);
      LeaseStore b = build(recorded, table, false, allowGlobalTable);
      String election = "iam-life";
      Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
      assertThat(b.tryAcquire(election, "b", TTL).isGranted()).isFalse();
      lease = a.renew(lease);
      assertThat(b.read(election).orElseThrow().holder()).isEqualTo("a");
      assertThat(b.watch(election, () -> {})).as("DynamoDB cannot watch: followers poll").isEmpty();
      a.release(lease);
      Lease next = b.tryAcquire(election, "b", TTL).lease().orElseThrow();
      b.release(next);
      a.close();
      b.close();
    }

    assertThat(sent)
        .as("the operations sent, against the table in docs/dynamodb.md")
        .containsExactlyInAnyOrderElementsOf(documentedActions(createTable, allowGlobalTable));
  }

  private static LeaseStore build(
      DynamoDbClient client, String table, boolean createTable, boolean allowGlobalTable) {
    return DynamoDbLeaseStore.builder(client)
        .table(table)
        .callTimeout(CALL_TIMEOUT)
        .createTable(createTable)
        .allowGlobalTable(allowGlobalTable)
        .build();
  }

  private static DynamoDbClient client(Set<String> sent) {
    ExecutionInterceptor recorder =
        new ExecutionInterceptor() {
          @Override
          public void beforeTransmission(
              Context.BeforeTransmission context, ExecutionAttributes attributes) {
            sent.add(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
          }
        };
    return DynamoDbClient.builder()
        .endpointOverride(URI.create("http://127.0.0.1:" + dynalite.address().getPort()))
        .region(Region.US_EAST_1)
        .credentialsProvider(Dynalite.CREDENTIALS)
        .httpClient(UrlConnectionHttpClient.create())
        .overrideConfiguration(c -> c.addExecutionInterceptor(recorder))
        .build();
  }
}
