package dev.baton.dynamodb;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionRecord;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.RecordStore;
import dev.baton.election.UrlSecrets;
import dev.baton.election.VersionedRecord;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ReplicaDescription;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/**
 * Election records as DynamoDB items, one per election in one table whose partition key is the
 * string attribute {@value #ELECTION}. An item holds the holder (absent when released), the term
 * (the fencing token), the lease duration in whole seconds, the acquire and renew times for humans,
 * and a version.
 *
 * <p>The version is a random UUID written anew by every write, not a counter: a counter starts
 * again when somebody deletes the item, and a holder that last saw version 5 of the old item could
 * then replace version 5 of the new one. Every write is conditional: a create on {@code
 * attribute_not_exists}, a replace on {@code version = :expected}; DynamoDB refuses it with {@code
 * ConditionalCheckFailedException} when the item changed, which is the normal "somebody else wrote
 * first", answered as empty and never logged. Reads are strongly consistent: an eventually
 * consistent read could show a follower an old version and make it count a lease from too late.
 *
 * <p>One call of the lease store, one call timeout: all the requests of one operation ({@link
 * #withinOneCallTimeout}) share it, each carrying what is left of it as its API-call and attempt
 * timeout, so an operation ends within it whatever the client's own settings, including retries
 * (which the provider's client does not make; a caller's client may).
 */
final class DynamoDbRecordStore implements RecordStore {

  static final String ELECTION = "election";
  static final String HOLDER = "holder";
  static final String TERM = "term";
  static final String LEASE_SECONDS = "leaseDurationSeconds";
  static final String ACQUIRE_TIME = "acquireTime";
  static final String RENEW_TIME = "renewTime";
  static final String VERSION = "version";

  /** DynamoDB's limit for a partition key value. */
  private static final int MAX_KEY_BYTES = 2048;

  /** How long {@link #createTableIfMissing} waits for a new table to become ACTIVE. */
  private static final Duration TABLE_ACTIVE_PATIENCE = Duration.ofSeconds(60);

  private final DynamoDbClient client;
  private final String table;
  private final boolean closesClient;
  private final String where;
  private final Duration callTimeout;

  /** For a request outside any store operation (creating the table): the call timeout alone. */
  private final AwsRequestOverrideConfiguration bounded;

  /**
   * The deadline ({@link System#nanoTime}) of the store operation this thread runs, if any: one
   * call of the lease store may take several requests (a write that lost a race, the read that says
   * who won, one more write), and together, SDK retries included, they get one call timeout.
   */
  private final ThreadLocal<Long> operationDeadline = new ThreadLocal<>();

  /**
   * @param closesClient whether {@link #close} closes {@code client}, which the provider built
   */
  DynamoDbRecordStore(
      DynamoDbClient client, String table, Duration callTimeout, boolean closesClient) {
    this.client = requireNonNull(client, "client");
    this.table = requireNonNull(table, "table");
    this.callTimeout = requireNonNull(callTimeout, "callTimeout");
    this.where = where(client);
    this.closesClient = closesClient;
    this.bounded =
        AwsRequestOverrideConfiguration.builder()
            .apiCallTimeout(callTimeout)
            .apiCallAttemptTimeout(callTimeout)
            .build();
  }

  /** The endpoint (without any user info) or the region, for messages: never credentials. */
  private static String where(DynamoDbClient client) {
    var config = client.serviceClientConfiguration();
    return config
        .endpointOverride()
        .map(u -> UrlSecrets.redact(u.toString()))
        .orElseGet(() -> "region " + config.region());
  }

  /**
   * Runs one operation of the lease store: every request it makes shares one call timeout that
   * starts now, as the API-call and attempt timeout of each request (so the SDK's retries fit in it
   * too); a request with no time left fails without being sent. Nested calls share the outer one.
   */
  <T> T withinOneCallTimeout(String election, Supplier<T> operation) {
    if (operationDeadline.get() != null) {
      return operation.get();
    }
    operationDeadline.set(System.nanoTime() + callTimeout.toNanos());
    try {
      checkTable(election, () -> bounded(election, "describe the table of"));
      return operation.get();
    } finally {
      operationDeadline.remove();
    }
  }

  /**
   * What bounds the next request: the time left of this thread's operation, else a call timeout.
   */
  private AwsRequestOverrideConfiguration bounded(String election, String what) {
    Long deadline = operationDeadline.get();
    if (deadline == null) {
      return bounded;
    }
    long remaining = deadline - System.nanoTime();
    // The SDK counts in whole milliseconds, and takes 0 for "no timeout": less than one is none.
    if (remaining < 1_000_000) {
      throw new LeaseStoreException(
          election,
          what
              + " item '"
              + election
              + "' in table "
              + table
              + " at "
              + where
              + ": the call timeout of "
              + callTimeout.toMillis()
              + " ms was spent by the operation's earlier requests");
    }
    Duration left = Duration.ofMillis(remaining / 1_000_000);
    return AwsRequestOverrideConfiguration.builder()
        .apiCallTimeout(left)
        .apiCallAttemptTimeout(left)
        .build();
  }

  @Override
  public Optional<VersionedRecord> read(String election) {
    checkElectionName(election);
    GetItemResponse response =
        call(
            election,
            "read",
            bound ->
                client.getItem(
                    r ->
                        r.tableName(table)
                            .key(key(election))
                            .consistentRead(true)
                            .overrideConfiguration(bound)));
    return response.hasItem() && !response.item().isEmpty()
        ? Optional.of(toVersioned(election, response.item()))
        : Optional.empty();
  }

  @Override
  public Optional<VersionedRecord> create(String election, ElectionRecord record) {
    checkElectionName(election);
    String version = UUID.randomUUID().toString();
    Map<String, AttributeValue> item = new HashMap<>(key(election));
    item.putAll(attributes(election, record, version));
    try {
      call(
          election,
          "create",
          bound ->
              client.putItem(
                  r ->
                      r.tableName(table)
                          .item(item)
                          .conditionExpression("attribute_not_exists(#election)")
                          .expressionAttributeNames(Map.of("#election", ELECTION))
                          .overrideConfiguration(bound)));
    } catch (ConditionalCheckFailedException e) {
      return Optional.empty(); // another candidate created it first
    }
    return Optional.of(new VersionedRecord(record, version));
  }

  @Override
  public Optional<VersionedRecord> replace(
      String election, String expectedVersion, ElectionRecord record) {
    checkElectionName(election);
    requireNonNull(expectedVersion, "expectedVersion");
    if (expectedVersion.isEmpty()) {
      return Optional.empty(); // an item without a version is nobody's to replace
    }
    String version = UUID.randomUUID().toString();
    Map<String, String> names = new HashMap<>();
    Map<String, AttributeValue> values = new HashMap<>();
    StringBuilder set = new StringBuilder("SET ");
    attributes(election, record, version)
        .forEach(
            (name, value) -> {
              names.put("#" + name, name);
              values.put(":" + name, value);
              set.append(set.length() > 4 ? ", " : "")
                  .append('#')
                  .append(name)
                  .append(" = :")
                  .append(name);
            });
    // A release names no holder: the attribute is removed, so that "no holder" reads the same
    // (absent) however the item was written.
    String update = record.isReleased() ? set + " REMOVE #" + HOLDER : set.toString();
    names.put("#" + HOLDER, HOLDER);
    values.put(":expected", AttributeValue.fromS(expectedVersion));
    try {
      call(
          election,
          "update",
          bound ->
              client.updateItem(
                  r ->
                      r.tableName(table)
                          .key(key(election))
                          .updateExpression(update)
                          .conditionExpression("#version = :expected")
                          .expressionAttributeNames(names)
                          .expressionAttributeValues(values)
                          .returnValues(ReturnValue.NONE)
                          .overrideConfiguration(bound)));
    } catch (ConditionalCheckFailedException e) {
      return Optional
          .empty(); // changed or deleted since expectedVersion: somebody else wrote first
    }
    return Optional.of(new VersionedRecord(record, version));
  }

  /** Refuses what DynamoDB cannot key an item by: an empty name or one over 2048 bytes. */
  @Override
  public void checkElectionName(String election) {
    requireNonNull(election, "election");
    int bytes = election.getBytes(UTF_8).length;
    if (bytes == 0 || bytes > MAX_KEY_BYTES) {
      throw new ConfigurationException(
          "election name '"
              + election
              + "' cannot key a DynamoDB item: use 1 to "
              + MAX_KEY_BYTES
              + " bytes of UTF-8, but it has "
              + bytes);
    }
  }

  @Override
  public String describe() {
    return "dynamodb (table " + table + " at " + where + ")";
  }

  @Override
  public void close() {
    if (closesClient) {
      client.close();
    }
  }

  /**
   * Creates the table (on-demand capacity, partition key {@value #ELECTION}) unless it exists, and
   * waits until it is ACTIVE: once, when the store is built, for setups that let the store own it.
   */
  void createTableIfMissing() {
    String what = "table " + table + " at " + where;
    try {
      if (tableStatus().isEmpty()) {
        try {
          client.createTable(
              r ->
                  r.tableName(table)
                      .attributeDefinitions(
                          AttributeDefinition.builder()
                              .attributeName(ELECTION)
                              .attributeType(ScalarAttributeType.S)
                              .build())
                      .keySchema(
                          KeySchemaElement.builder()
                              .attributeName(ELECTION)
                              .keyType(KeyType.HASH)
                              .build())
                      .billingMode(BillingMode.PAY_PER_REQUEST)
                      .overrideConfiguration(bounded));
        } catch (ResourceInUseException e) {
          // Another process created it at the same moment: wait for it like for our own.
        }
      }
      long deadline = System.nanoTime() + TABLE_ACTIVE_PATIENCE.toNanos();
      while (tableStatus().filter(s -> s == TableStatus.ACTIVE).isEmpty()) {
        if (System.nanoTime() - deadline > 0) {
          throw new LeaseStoreException(
              null, what + " is not ACTIVE after " + TABLE_ACTIVE_PATIENCE.toSeconds() + " s");
        }
        Thread.sleep(200); // DescribeTable is the only way to learn the state; poll it gently
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(null, "creating " + what + ": interrupted", e);
    } catch (SdkException e) {
      throw new LeaseStoreException(
          null, "creating " + what + " failed: " + e.getMessage() + accessHint(e), e);
    }
  }

  private Optional<TableStatus> tableStatus() {
    return describeTable().map(TableDescription::tableStatus);
  }

  private Optional<TableDescription> describeTable() {
    try {
      return Optional.of(
          client.describeTable(r -> r.tableName(table).overrideConfiguration(bounded)).table());
    } catch (ResourceNotFoundException e) {
      return Optional.empty();
    }
  }

  /**
   * Refuses a global table (one with replicas in other regions) before the first grant: DynamoDB's
   * conditional writes and strongly consistent reads hold only within the region that serves them,
   * and replication between regions settles conflicts by last writer wins, so candidates writing
   * through two regions could both be granted from one version, with the same token.
   *
   * <p>Called when the store is built; a table that is missing or cannot be described for now (the
   * network, a 5xx) is checked again at the start of each call until it has been, so a process can
   * still start while DynamoDB is away. A refused DescribeTable is a setup error and fails at once.
   *
   * @param key how the caller names the opt-out, for the message
   */
  void refuseGlobalTable(String key) {
    this.globalTableKey = key;
    checkTable(null, () -> bounded);
  }

  /** What {@link #refuseGlobalTable} left to check: the key that allows a global table, or null. */
  private volatile String globalTableKey;

  /**
   * @param election the election of the call that checks, or null when the store is being built
   */
  private void checkTable(String election, Supplier<AwsRequestOverrideConfiguration> bound) {
    String key = globalTableKey;
    if (key == null) {
      return;
    }
    String what = "table " + table + " at " + where;
    Optional<TableDescription> described;
    try {
      described =
          Optional.of(
              client
                  .describeTable(r -> r.tableName(table).overrideConfiguration(bound.get()))
                  .table());
    } catch (ResourceNotFoundException e) {
      return; // the first call that needs it says so, naming the setting that creates it
    } catch (SdkException e) {
      if (election == null && accessHint(e).isEmpty()) {
        return; // at build: checked again by the first call, when DynamoDB may answer
      }
      throw new LeaseStoreException(
          election,
          "checking that "
              + what
              + " has no replicas in other regions failed: "
              + e.getMessage()
              + accessHint(e),
          e);
    }
    TableDescription t = described.orElseThrow();
    if ((t.hasReplicas() && !t.replicas().isEmpty()) || t.globalTableVersion() != null) {
      throw new ConfigurationException(
          what
              + " is a global table (version "
              + t.globalTableVersion()
              + ", replicas in "
              + (t.hasReplicas()
                  ? t.replicas().stream().map(ReplicaDescription::regionName).toList()
                  : List.of())
              + "): conditional writes and consistent reads hold only within one region,"
              + " so candidates in two regions could both be granted, with the same token."
              + " Use a table without replicas; or, only if every candidate of every"
              + " election goes to the same region, set "
              + key
              + "=true (see docs/dynamodb.md)");
    }
    globalTableKey = null;
  }

  /** Runs one request; everything but a failed condition becomes a LeaseStoreException. */
  private <T> T call(
      String election, String what, Function<AwsRequestOverrideConfiguration, T> request) {
    AwsRequestOverrideConfiguration bound = bounded(election, what);
    try {
      return request.apply(bound);
    } catch (ConditionalCheckFailedException e) {
      throw e; // a normal answer: the caller turns it into an empty result
    } catch (ResourceNotFoundException e) {
      throw new LeaseStoreException(
          election,
          what
              + " item '"
              + election
              + "': table "
              + table
              + " does not exist at "
              + where
              + " (create it, or set election.dynamodb.create-table=true; see docs/dynamodb.md)",
          e);
    } catch (AbortedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(
          election, what + " item '" + election + "' in table " + table + ": interrupted", e);
    } catch (SdkException e) {
      throw new LeaseStoreException(
          election,
          what
              + " item '"
              + election
              + "' in table "
              + table
              + " at "
              + where
              + " failed: "
              + e.getMessage()
              + accessHint(e),
          e);
    }
  }

  private String accessHint(SdkException e) {
    boolean denied =
        e instanceof AwsServiceException service && service.awsErrorDetails() != null
            ? "AccessDeniedException".equals(service.awsErrorDetails().errorCode())
            : String.valueOf(e.getMessage()).contains("not authorized");
    return denied
        ? " (the store needs dynamodb:GetItem, PutItem, UpdateItem and DescribeTable on table "
            + table
            + ", and CreateTable with create-table on; see docs/dynamodb.md)"
        : "";
  }

  private static Map<String, AttributeValue> key(String election) {
    return Map.of(ELECTION, AttributeValue.fromS(election));
  }

  /** Every attribute but the key, and the holder only when there is one. */
  private static Map<String, AttributeValue> attributes(
      String election, ElectionRecord record, String version) {
    if (record.transitions() < 0) {
      throw new LeaseStoreException(
          election, "a term below 0 cannot be a fencing token: " + record);
    }
    Map<String, AttributeValue> item = new HashMap<>();
    if (!record.isReleased()) {
      item.put(HOLDER, AttributeValue.fromS(record.holder()));
    }
    Duration d = record.leaseDuration();
    long seconds = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
    item.put(TERM, AttributeValue.fromN(Long.toString(record.transitions())));
    item.put(LEASE_SECONDS, AttributeValue.fromN(Long.toString(seconds)));
    item.put(ACQUIRE_TIME, AttributeValue.fromS(record.acquireTime().toString()));
    item.put(RENEW_TIME, AttributeValue.fromS(record.renewTime().toString()));
    item.put(VERSION, AttributeValue.fromS(version));
    return item;
  }

  private VersionedRecord toVersioned(String election, Map<String, AttributeValue> item) {
    try {
      ElectionRecord record =
          new ElectionRecord(
              string(item, HOLDER).orElse(""),
              Duration.ofSeconds(number(item, LEASE_SECONDS)),
              string(item, ACQUIRE_TIME).map(Instant::parse).orElse(Instant.EPOCH),
              string(item, RENEW_TIME).map(Instant::parse).orElse(Instant.EPOCH),
              number(item, TERM));
      // An item without a version was written by something else; "" matches no replace.
      return new VersionedRecord(record, string(item, VERSION).orElse(""));
    } catch (NumberFormatException | DateTimeParseException e) {
      throw new LeaseStoreException(
          election,
          "item '"
              + election
              + "' in table "
              + table
              + " is not an election record: "
              + item.keySet(),
          e);
    }
  }

  private static Optional<String> string(Map<String, AttributeValue> item, String name) {
    AttributeValue value = item.get(name);
    return value == null || value.s() == null ? Optional.empty() : Optional.of(value.s());
  }

  private static long number(Map<String, AttributeValue> item, String name) {
    AttributeValue value = item.get(name);
    return value == null || value.n() == null ? 0 : Long.parseLong(value.n());
  }
}
