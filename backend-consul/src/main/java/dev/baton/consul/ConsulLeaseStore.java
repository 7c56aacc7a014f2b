package dev.baton.consul;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.election.Subscription;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.kiwiproject.consul.Consul;
import org.kiwiproject.consul.ConsulException;
import org.kiwiproject.consul.KeyValueClient;
import org.kiwiproject.consul.model.ConsulResponse;
import org.kiwiproject.consul.model.kv.Operation;
import org.kiwiproject.consul.model.kv.TxResponse;
import org.kiwiproject.consul.model.kv.Value;
import org.kiwiproject.consul.model.kv.Verb;
import org.kiwiproject.consul.option.ConsistencyMode;
import org.kiwiproject.consul.option.ImmutableQueryOptions;
import org.kiwiproject.consul.option.QueryOptions;

/**
 * A {@link LeaseStore} on Consul's sessions and KV locks, through kiwiproject's consul-client.
 *
 * <p>Each election is one key, {@code <prefix><election>}, whose value is the holder's candidate id
 * and whose {@code Flags} hold the lease's TTL in milliseconds. A grant locks the key with the
 * store's Consul session ({@code ?acquire} in a transaction); the key is held exactly while it
 * shows a session, so expiry is judged by Consul alone: it unlocks the key when it invalidates the
 * session, no earlier than the session's TTL after its last renewal, and at the latest about twice
 * the TTL after it (Consul's documented bound).
 *
 * <p><b>Sessions.</b> One Consul session per store and TTL, shared by every election the store
 * holds (as the ZooKeeper store shares its session): {@code Behavior=release}, {@code
 * LockDelay=0s}, no health checks, TTL = the lease duration asked for. An acquisition renews (or
 * creates) the session within the call before it locks the key, so a grant lasts its TTL from the
 * start of the call; a renewal renews the session and then confirms with a consistent read that the
 * key still shows the session and the term.
 *
 * <p><b>Fencing token.</b> The {@code ModifyIndex} of the transaction that locked the key: it is
 * the Raft index of that write, which grows with every write to the cluster, so every grant gets a
 * higher token than every grant before it, also after the key was deleted and written again (the
 * key's own {@code LockIndex} would start over at 1 then). Renewals do not write the key and keep
 * it.
 *
 * <p><b>Guarded writes.</b> A grant is one transaction: {@code check-index} on the {@code
 * ModifyIndex} the decision read (or {@code check-not-exists}), then {@code lock}; a release is
 * {@code check-index} on the term's token, then {@code unlock}. Neither applies when the key
 * changed since; a lock also fails when the session is no longer valid. Reads that decide a grant
 * or confirm a renewal use Consul's {@code consistent} mode (the leader confirms it still leads
 * before answering); {@code stale} reads could show a released key as held for as long as a
 * follower lags.
 *
 * <p>Every call returns or throws within the call timeout. A store built with {@link
 * #builder(Consul)} never closes the client; {@link #close()} destroys its sessions, which unlocks
 * every key it still holds at once.
 */
public final class ConsulLeaseStore implements LeaseStore {

  public static final String DEFAULT_PREFIX = "baton/elections/";
  public static final Duration DEFAULT_CALL_TIMEOUT = CallTimeout.DEFAULT;

  /** Consul's default {@code session_ttl_max}. */
  static final Duration MAX_TTL = Duration.ofHours(24);

  private static final String CHECK_NOT_EXISTS = "check-not-exists";

  private final Consul consul;
  private final KeyValueClient kv;
  private final boolean closesClient;
  private final String prefix;
  private final long callTimeoutNanos;
  private final MonotonicClock clock;
  private final Calls calls;
  private final Sessions sessions;
  private final String description;
  private final Set<ElectionWatch> watches = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private ConsulLeaseStore(Builder b) {
    this.consul = b.consul;
    this.kv = b.consul.keyValueClient();
    this.closesClient = b.closesClient;
    this.prefix = b.prefix;
    this.callTimeoutNanos = b.callTimeout.toNanos();
    this.clock = b.clock;
    this.calls = new Calls(b.clock, b.callTimeout);
    this.sessions = new Sessions(b.consul.sessionClient(), calls, b.sessionName);
    this.description =
        "consul" + (b.address == null ? "" : " at " + b.address) + " under " + b.prefix;
  }

  /** A store on a client the caller owns and closes; the store never closes it. */
  public static Builder builder(Consul consul) {
    return new Builder(requireNonNull(consul, "consul"));
  }

  /** Settings of a {@link ConsulLeaseStore}, checked when set. */
  public static final class Builder {
    private final Consul consul;
    private String prefix = DEFAULT_PREFIX;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private String sessionName = "baton";
    private MonotonicClock clock = MonotonicClock.system();
    private boolean closesClient;
    private String address;

    private Builder(Consul consul) {
      this.consul = consul;
    }

    /**
     * Where election keys live: {@code <prefix><election>}, default {@value #DEFAULT_PREFIX}. No
     * leading slash (Consul's KV paths have none); a token's ACL policy needs write on it.
     */
    public Builder prefix(String prefix) {
      requireNonNull(prefix, "prefix");
      if (prefix.isEmpty() || prefix.startsWith("/")) {
        throw new ConfigurationException(
            "prefix: '"
                + prefix
                + "' is not accepted; give a non-empty KV path without a leading slash (default "
                + DEFAULT_PREFIX
                + ")");
      }
      this.prefix = prefix;
      return this;
    }

    /** The longest any call may take (default 3 s): at most half the renew deadline. */
    public Builder callTimeout(Duration callTimeout) {
      this.callTimeout = CallTimeout.check("callTimeout", callTimeout);
      return this;
    }

    /** The name the store's Consul sessions show ({@code consul} UI, {@code /v1/session/list}). */
    public Builder sessionName(String sessionName) {
      requireNonNull(sessionName, "sessionName");
      this.sessionName = sessionName;
      return this;
    }

    /** The clock that measures calls on this side; the system's by default. */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    /** For the provider: the store closes the client it was given, which the provider built. */
    Builder closesClient() {
      this.closesClient = true;
      return this;
    }

    /** For the provider: the address its client talks to, for {@link #describe()}. */
    Builder address(String address) {
      this.address = requireNonNull(address, "address");
      return this;
    }

    public ConsulLeaseStore build() {
      return new ConsulLeaseStore(this);
    }
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    checkElection(election);
    requireNonNull(candidate, "candidate");
    requireNonNull(ttl, "ttl");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive, but was " + ttl);
    }
    if (ttl.compareTo(MAX_TTL) > 0) {
      throw new IllegalArgumentException(
          "ttl must be at most 24h (Consul's session_ttl_max), but was " + ttl);
    }
    // Consul counts session TTLs in whole milliseconds; never shorter than asked.
    Duration sessionTtl =
        Duration.ofMillis(ttl.toMillis() + (ttl.toNanosPart() % 1_000_000 == 0 ? 0 : 1));
    long deadline = clock.nanoTime() + callTimeoutNanos;
    ensureOpen(election);
    String key = key(election);
    // Twice at most: a lock refused because the key changed since the read is answered by a fresh
    // read; one refused because the session was invalidated in between gets a new session.
    for (int attempt = 1; attempt <= 2; attempt++) {
      Optional<Value> current = readKey(election, key, deadline);
      if (current.isPresent() && current.get().getSession().isPresent()) {
        return Acquisition.held(record(election, current.get()));
      }
      Sessions.Live session = sessions.fresh(sessionTtl, election, deadline);
      Operation check =
          current.isPresent()
              ? Operation.builder(Verb.CHECK_INDEX)
                  .key(key)
                  .index(BigInteger.valueOf(current.get().getModifyIndex()))
                  .build()
              : Operation.builder(Verb.CHECK_INDEX).verb(CHECK_NOT_EXISTS).key(key).build();
      // The client base64-encodes the value for the transaction API itself.
      Operation lock =
          Operation.builder(Verb.LOCK)
              .key(key)
              .value(candidate)
              .flags(sessionTtl.toMillis())
              .session(session.id())
              .build();
      Optional<Value> locked =
          transaction(election, deadline, "locking the election key", check, lock);
      if (locked.isPresent()) {
        return Acquisition.granted(
            new Lease(
                election,
                candidate,
                FencingToken.of(locked.get().getModifyIndex()),
                sessionTtl,
                session.id()));
      }
    }
    Optional<Value> now = readKey(election, key, deadline);
    if (now.isPresent() && now.get().getSession().isPresent()) {
      return Acquisition.held(record(election, now.get()));
    }
    throw new LeaseStoreException(
        election, "Consul refused to lock the free election key twice (its session kept ending?)");
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    String election = lease.election();
    long deadline = clock.nanoTime() + callTimeoutNanos;
    ensureOpen(election);
    // The session first: if the read below then shows it on the key, the key stays locked until
    // Consul invalidates the session, no earlier than its TTL from this renewal.
    if (!sessions.renew(lease.handle(), election, deadline)) {
      sessions.forget(lease.handle());
      throw new LeaseLostException(
          election,
          "the Consul session of term "
              + lease.token()
              + " has ended (its TTL ran out or it was destroyed)",
          null);
    }
    Optional<Value> current = readKey(election, key(election), deadline);
    if (current.isPresent()
        && current.get().getSession().filter(lease.handle()::equals).isPresent()
        && current.get().getModifyIndex() == lease.token().value()) {
      return lease;
    }
    String holder =
        current
            .filter(v -> v.getSession().isPresent())
            .map(ConsulLeaseStore::holderOf)
            .orElse(null);
    throw new LeaseLostException(
        election,
        "term "
            + lease.token()
            + " is over"
            + (holder == null ? "; nobody holds the election" : "; " + holder + " holds it now"),
        holder);
  }

  /**
   * Unlocks the key in one transaction guarded by the term's token, so a release never touches a
   * later term. Unlocking (unlike a session invalidation) is not subject to a lock delay: the next
   * candidate, woken by its watch, takes the key at once.
   */
  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    String election = lease.election();
    long deadline = clock.nanoTime() + callTimeoutNanos;
    ensureOpen(election);
    String key = key(election);
    transaction(
        election,
        deadline,
        "releasing the election key",
        Operation.builder(Verb.CHECK_INDEX)
            .key(key)
            .index(BigInteger.valueOf(lease.token().value()))
            .build(),
        Operation.builder(Verb.UNLOCK).key(key).session(lease.handle()).build());
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    checkElection(election);
    long deadline = clock.nanoTime() + callTimeoutNanos;
    ensureOpen(election);
    return readKey(election, key(election), deadline)
        .filter(v -> v.getSession().isPresent())
        .map(v -> record(election, v));
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    checkElection(election);
    requireNonNull(changed, "changed");
    ensureOpen(election);
    ElectionWatch watch =
        new ElectionWatch(
            kv,
            election,
            key(election),
            changed,
            watches::remove,
            Duration.ofNanos(callTimeoutNanos).dividedBy(4));
    watches.add(watch);
    watch.start();
    return Optional.of(watch);
  }

  /** A session invalidation unlocks the key, which wakes the blocking query. */
  @Override
  public boolean watchReportsExpiry() {
    return true;
  }

  /**
   * Consul KV keys are paths of UTF-8 text; an empty name would be the prefix itself, and a
   * trailing slash names a folder.
   */
  @Override
  public void checkElectionName(String election) {
    requireNonNull(election, "election");
    if (election.isEmpty() || election.endsWith("/")) {
      throw new ConfigurationException(
          "election name '"
              + election
              + "' is not accepted by the Consul backend: it must be non-empty and not end with '/'");
    }
  }

  /** Consul's sessions take TTLs up to 24 h ({@code session_ttl_max}). */
  @Override
  public void checkLeaseDuration(Duration leaseDuration) {
    if (leaseDuration.compareTo(MAX_TTL) > 0) {
      throw new ConfigurationException(
          "election.lease-duration: "
              + leaseDuration
              + " is longer than Consul's longest session TTL (24h)");
    }
  }

  @Override
  public String describe() {
    return description;
  }

  /** Stops the watches and destroys the store's sessions, which unlocks every key they hold. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    new ArrayList<>(watches).forEach(ElectionWatch::close);
    sessions.destroyAll(clock.nanoTime() + callTimeoutNanos);
    calls.close();
    if (closesClient) {
      consul.destroy();
    }
  }

  // ---- Consul calls

  private Optional<Value> readKey(String election, String key, long deadline) {
    QueryOptions consistent =
        ImmutableQueryOptions.builder().consistencyMode(ConsistencyMode.CONSISTENT).build();
    return calls.await(
        () -> kv.getValue(key, consistent), deadline, election, "reading the election key");
  }

  /**
   * Runs {@code operations} as one Consul transaction: the entry the last operation returned, or
   * empty when a check failed (HTTP 409: the key changed, or a lock's session is not valid).
   */
  private Optional<Value> transaction(
      String election, long deadline, String what, Operation... operations) {
    return calls.await(
        () -> {
          try {
            ConsulResponse<TxResponse> response = kv.performTransaction(operations);
            List<Map<String, Value>> results = response.getResponse().results();
            if (results == null || results.isEmpty()) {
              return Optional.<Value>empty();
            }
            return Optional.ofNullable(results.get(results.size() - 1).get("KV"));
          } catch (ConsulException e) {
            if (e.hasCode() && e.getCode() == 409) {
              return Optional.<Value>empty();
            }
            throw e;
          }
        },
        deadline,
        election,
        what);
  }

  private static LeaseRecord record(String election, Value v) {
    return new LeaseRecord(
        election,
        holderOf(v),
        FencingToken.of(v.getModifyIndex()),
        Duration.ofMillis(Math.max(1, v.getFlags())),
        Optional.empty(),
        Optional.empty());
  }

  private static String holderOf(Value v) {
    return v.getValueAsString(UTF_8).orElse("");
  }

  private String key(String election) {
    return prefix + election;
  }

  private void ensureOpen(String election) {
    if (closed) {
      throw new LeaseStoreException(election, "the Consul lease store is closed");
    }
  }

  private static void checkElection(String election) {
    requireNonNull(election, "election");
    if (election.isEmpty()) {
      throw new IllegalArgumentException("election must not be empty");
    }
  }

  @Override
  public String toString() {
    return description;
  }
}
