package dev.baton.dynamodb;

import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseRecord;
import dev.baton.election.MonotonicClock;
import dev.baton.election.ObservedTimeLeaseStore;
import dev.baton.election.Renewal;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Leader election on DynamoDB: one item per election in one table, written only with conditional
 * writes.
 *
 * <pre>{@code
 * DynamoDbLeaseStore store = DynamoDbLeaseStore.builder(client).table("baton-elections").build();
 * }</pre>
 *
 * <p>DynamoDB has no clock a client can read, and client clocks disagree, so expiry is judged as
 * the Kubernetes backend and client-go judge it: each follower counts the lease duration written in
 * the item from when it saw the item's version change ({@link ObservedTimeLeaseStore}). A follower
 * that starts while an item is held therefore waits one lease duration before it may take over,
 * even if the holder is long gone; a released item (no holder) is taken at once. The fencing token
 * is the item's {@code term}, higher with every grant. DynamoDB cannot watch an item, so followers
 * poll at the retry period.
 *
 * <p>The client stays the caller's unless the provider built it: the store never closes a client it
 * was given. Each call ends within the call timeout (default 3 s; at most half the renew deadline,
 * see {@link CallTimeout}), all its requests and the client's own retries of them together,
 * whatever the client's own timeouts.
 */
public final class DynamoDbLeaseStore extends ForwardingLeaseStore {

  public static final Duration DEFAULT_CALL_TIMEOUT = CallTimeout.DEFAULT;
  public static final String DEFAULT_TABLE = "baton-elections";

  /** DynamoDB's rule for table names. */
  private static final Pattern TABLE_NAME = Pattern.compile("[a-zA-Z0-9_.-]{3,255}");

  private final DynamoDbRecordStore records;

  // Lease semantics on the items, judged by observed time: every call goes to the shared adapter,
  // within one call timeout for all the requests it makes.
  private DynamoDbLeaseStore(Builder b, DynamoDbRecordStore records) {
    super(new ObservedTimeLeaseStore(records, b.clock, b.wallClock));
    this.records = records;
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    return records.withinOneCallTimeout(election, () -> super.tryAcquire(election, candidate, ttl));
  }

  @Override
  public Lease renew(Lease lease) {
    return records.withinOneCallTimeout(lease.election(), () -> super.renew(lease));
  }

  @Override
  public List<Renewal> renewAll(List<Lease> leases) {
    return records.withinOneCallTimeout(
        leases.isEmpty() ? "" : leases.get(0).election(), () -> super.renewAll(leases));
  }

  @Override
  public void release(Lease lease) {
    records.withinOneCallTimeout(
        lease.election(),
        () -> {
          super.release(lease);
          return null;
        });
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    return records.withinOneCallTimeout(election, () -> super.read(election));
  }

  static String checkTableName(String key, String table) {
    if (!TABLE_NAME.matcher(table).matches()) {
      throw new ConfigurationException(
          key
              + ": '"
              + table
              + "' is not a DynamoDB table name; use 3 to 255 letters, digits, '_', '-' and '.'");
    }
    return table;
  }

  /** Starts a store on {@code client}, which the caller owns and closes. */
  public static Builder builder(DynamoDbClient client) {
    return new Builder(requireNonNull(client, "client"));
  }

  /** Settings of a {@link DynamoDbLeaseStore}, checked when set. */
  public static final class Builder {
    private final DynamoDbClient client;
    private String table = DEFAULT_TABLE;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private MonotonicClock clock = MonotonicClock.system();
    private Clock wallClock = Clock.systemUTC();
    private boolean createTable;
    private boolean allowGlobalTable;
    private boolean closesClient;

    private Builder(DynamoDbClient client) {
      this.client = client;
    }

    /** The table of the election items; default {@value DynamoDbLeaseStore#DEFAULT_TABLE}. */
    public Builder table(String table) {
      this.table = checkTableName("table", requireNonNull(table, "table"));
      return this;
    }

    /**
     * The longest any one request may take before it fails with a LeaseStoreException (default 3
     * s): at most half the renew deadline it is used with ({@link CallTimeout}).
     */
    public Builder callTimeout(Duration callTimeout) {
      this.callTimeout = CallTimeout.check("callTimeout", callTimeout);
      return this;
    }

    /**
     * Whether {@link #build()} creates the table (on-demand capacity, partition key {@code
     * election} of type string) when it does not exist, and waits until it is active; off by
     * default, so the store needs no table permissions beyond reading and writing items.
     */
    public Builder createTable(boolean createTable) {
      this.createTable = createTable;
      return this;
    }

    /**
     * Whether {@link #build()} accepts a global table (one with replicas in other regions); off by
     * default, and then {@link #build()} refuses one with a {@link ConfigurationException}: a
     * conditional write holds only within one region, so candidates in two regions could both be
     * granted. Turn it on only when every candidate of every election uses the same region; the
     * store then skips the check, and needs no dynamodb:DescribeTable.
     */
    public Builder allowGlobalTable(boolean allowGlobalTable) {
      this.allowGlobalTable = allowGlobalTable;
      return this;
    }

    /** The clock that measures how long an item stayed unchanged; the system's by default. */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    /** The clock for the acquire and renew times written for humans; UTC system time by default. */
    public Builder wallClock(Clock wallClock) {
      this.wallClock = requireNonNull(wallClock, "wallClock");
      return this;
    }

    /**
     * For the provider: the store closes the client it was given, which the provider built, and its
     * messages name the provider's keys.
     */
    Builder closesClient() {
      this.closesClient = true;
      return this;
    }

    /**
     * Builds the store; with {@link #createTable} on, creates the table first if it is missing. It
     * reads the table's description (one DescribeTable) and refuses a global table unless {@link
     * #allowGlobalTable} is on.
     *
     * @throws ConfigurationException for a global table
     * @throws dev.baton.election.LeaseStoreException when the table cannot be described or made
     */
    public DynamoDbLeaseStore build() {
      DynamoDbRecordStore records =
          new DynamoDbRecordStore(client, table, callTimeout, closesClient);
      if (createTable) {
        records.createTableIfMissing();
      }
      if (!allowGlobalTable) {
        records.refuseGlobalTable(
            closesClient ? DynamoDbLeaseStoreProvider.ALLOW_GLOBAL_TABLE : "allowGlobalTable");
      }
      return new DynamoDbLeaseStore(this, records);
    }
  }
}
