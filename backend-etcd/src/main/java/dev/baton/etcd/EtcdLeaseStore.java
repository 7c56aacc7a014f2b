package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.ConfigurationException;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.election.Subscription;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaseStore} on etcd v3 through jetcd.
 *
 * <p>Each election is one key, {@code <prefix><election>}, whose value is the holder's candidate
 * id. It is created only if absent, in one transaction, and attached to an etcd lease, so etcd
 * deletes it when the lease expires: expiry is judged by etcd alone. The fencing token is the key's
 * {@code mod_revision}. A grant to a new holder creates the key, so the token is then also its
 * {@code create_revision}; a new term for the same holder rewrites the key in one transaction
 * guarded by the old {@code mod_revision} (etcd refuses a delete and a put of one key in one
 * transaction), so every grant gets a higher token while renewals, which only keep the etcd lease
 * alive, keep it. {@link #guarded} makes the leader's own etcd writes conditional on its term.
 *
 * <p>All elections of a store with the same TTL share one etcd lease, and renewals within {@code
 * keepAliveSharing} of each other share one keep-alive: a thousand elections cost about one
 * keep-alive per sharing window, plus batched reads that confirm each key is still its holder's.
 * To keep the lease contract exact despite the sharing, the etcd lease is granted that much longer:
 * {@link Lease#ttl()} is the etcd TTL minus {@code keepAliveSharing}, at least the TTL asked for
 * (etcd counts whole seconds, so it is rounded up). A holder that stops renewing loses its key at
 * most {@code ttl + keepAliveSharing} after its last renewal began.
 *
 * <p>Every call returns or throws within the call timeout. A store built with {@link
 * #builder(Client)} never closes the client; {@link #close()} revokes the etcd leases it granted.
 */
public final class EtcdLeaseStore implements LeaseStore {

  public static final String DEFAULT_PREFIX = "/baton/elections/";
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(3);
  public static final Duration DEFAULT_KEEP_ALIVE_SHARING = Duration.ofSeconds(1);

  private static final Logger log = LoggerFactory.getLogger(EtcdLeaseStore.class);
  /** etcd's largest lease TTL, in seconds. */
  private static final long MAX_TTL_SECONDS = 9_000_000_000L;
  /** How often a step that found the state changed under it is tried again within one call. */
  private static final int ATTEMPTS = 3;
  /** Background attempts to delete a key whose release failed: after 1, 2, 4, 8 and 16 s. */
  private static final int RELEASE_RETRIES = 5;

  private final Client client;
  private final KV kv;
  private final boolean ownsClient;
  private final String prefix;
  private final long callTimeoutNanos;
  private final Duration keepAliveSharing;
  private final long sharingNanos;
  private final String description;
  private final MonotonicClock clock = MonotonicClock.system();
  private final Calls calls;
  private final SharedLeases leases;
  private final KeyReads keyReads;
  private final HolderRecords records;
  private final Set<ElectionWatch> watches = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private EtcdLeaseStore(Builder b) {
    this.client = b.client;
    this.kv = b.client.getKVClient();
    this.ownsClient = b.ownsClient;
    this.prefix = b.prefix;
    this.callTimeoutNanos = b.callTimeout.toNanos();
    this.keepAliveSharing = b.keepAliveSharing;
    this.sharingNanos = b.keepAliveSharing.toNanos();
    this.description = "etcd" + (b.endpoints == null ? "" : " at " + b.endpoints) + " under " + b.prefix;
    this.calls = new Calls(clock, b.callTimeout);
    this.leases = new SharedLeases(b.client.getLeaseClient(), clock, callTimeoutNanos);
    this.keyReads = new KeyReads(kv, callTimeoutNanos);
    this.records = new HolderRecords(b.client.getLeaseClient(), leases, calls, this::reportedTtl);
  }

  /** A store on a client the caller owns and closes; the store never closes it. */
  public static Builder builder(Client client) {
    return new Builder(requireNonNull(client, "client"));
  }

  /** Settings of an {@link EtcdLeaseStore}, checked when set. */
  public static final class Builder {
    private final Client client;
    private String prefix = DEFAULT_PREFIX;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private Duration keepAliveSharing = DEFAULT_KEEP_ALIVE_SHARING;
    private boolean ownsClient;
    private String endpoints;

    private Builder(Client client) {
      this.client = client;
    }

    /** Where election keys live: {@code <prefix><election>}. Default {@value #DEFAULT_PREFIX}. */
    public Builder prefix(String prefix) {
      requireNonNull(prefix, "prefix");
      if (prefix.isEmpty()) {
        throw new IllegalArgumentException("prefix must not be empty (default " + DEFAULT_PREFIX + ")");
      }
      this.prefix = prefix;
      return this;
    }

    /**
     * The longest any call may take, shorter than the renew deadline it is used with. Default 3 s;
     * an etcd leader change stalls writes for several seconds (see the README).
     */
    public Builder callTimeout(Duration callTimeout) {
      requireNonNull(callTimeout, "callTimeout");
      if (callTimeout.isNegative() || callTimeout.isZero() || callTimeout.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new IllegalArgumentException("callTimeout must be more than 0 and at most 1m, but was " + callTimeout);
      }
      this.callTimeout = callTimeout;
      return this;
    }

    /**
     * How old a keep-alive may be and still serve a renewal of another election on the same etcd
     * lease. Longer shares more; the etcd lease is granted this much longer than the TTL asked,
     * which delays takeover after a crash by up to this much. Zero: every renewal sends its own
     * keep-alive. Default 1 s.
     */
    public Builder keepAliveSharing(Duration keepAliveSharing) {
      requireNonNull(keepAliveSharing, "keepAliveSharing");
      if (keepAliveSharing.isNegative() || keepAliveSharing.compareTo(Duration.ofSeconds(10)) > 0) {
        throw new IllegalArgumentException("keepAliveSharing must be from 0 to 10s, but was " + keepAliveSharing);
      }
      this.keepAliveSharing = keepAliveSharing;
      return this;
    }

    /** For the provider: the store closes the client it was given, which the provider built. */
    Builder ownsClient(String endpoints) {
      this.ownsClient = true;
      this.endpoints = endpoints;
      return this;
    }

    public EtcdLeaseStore build() {
      return new EtcdLeaseStore(this);
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
    long started = clock.nanoTime();
    long deadline = started + callTimeoutNanos;
    ensureOpen(election);
    long seconds = etcdTtlSeconds(ttl);
    if (!leases.hasLive(seconds)) {
      // A follower should not grant (and then keep alive) an etcd lease only to learn that the
      // election is held: look first. The transaction below still decides.
      Optional<KeyValue> current =
          calls.await(Calls.retryingAuth(() -> keyReads.read(key(election))), deadline, election, "reading the election key");
      if (current.isPresent() && !isOurs(current.get(), bytes(candidate))) {
        return Acquisition.held(records.of(election, current.get(), deadline, false));
      }
    }
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      SharedLease lease = reserve(seconds, deadline, election);
      try {
        Optional<Acquisition> outcome = acquireOn(lease, election, candidate, started, deadline);
        if (outcome.isPresent()) {
          return outcome.get();
        }
      } catch (LeaseStoreException e) {
        if (!EtcdErrors.isLeaseNotFound(e)) {
          throw e;
        }
        // The shared lease expired: its keys are gone too. Grant a fresh one and start over.
        leases.lost(lease);
      } finally {
        leases.unreserve(lease);
      }
    }
    throw new LeaseStoreException(
        election, "the election key or its etcd lease kept changing during " + ATTEMPTS + " attempts; try again");
  }

  /** One attempt; empty when the key changed under it in a way worth another attempt. */
  private Optional<Acquisition> acquireOn(
      SharedLease lease, String election, String candidate, long started, long deadline) {
    ByteSequence key = key(election);
    ByteSequence value = bytes(candidate);
    // Confirms, concurrently with the transaction, that the lease lives for a TTL from `started`.
    CompletableFuture<Void> alive = lease.keepAlive(started, sharingNanos);
    PutOption onLease = PutOption.builder().withLeaseId(lease.id).build();
    TxnResponse created =
        calls.await(
            Calls.retryingAuth(
                () ->
                    kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(key, value, onLease), Op.get(key, GetOption.DEFAULT))
                        .Else(Op.get(key, GetOption.DEFAULT))
                        .commit()),
            deadline,
            election,
            "creating the election key");
    Optional<KeyValue> current = firstKey(created);
    KeyValue previousTerm = null;
    if (!created.isSucceeded()) {
      if (current.isEmpty()) {
        return Optional.empty();
      }
      KeyValue held = current.get();
      if (!isOurs(held, value)) {
        return Optional.of(Acquisition.held(records.of(election, held, deadline, false)));
      }
      // A new term for the same candidate: rewrite the key so that its mod_revision grows.
      TxnResponse rewritten =
          calls.await(
              Calls.retryingAuth(
                  () ->
                      kv.txn()
                          .If(
                              new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(held.getModRevision())),
                              new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(value)))
                          .Then(Op.put(key, value, onLease), Op.get(key, GetOption.DEFAULT))
                          .Else(Op.get(key, GetOption.DEFAULT))
                          .commit()),
              deadline,
              election,
              "starting a new term");
      current = firstKey(rewritten);
      if (!rewritten.isSucceeded()) {
        if (current.isPresent() && !isOurs(current.get(), value)) {
          return Optional.of(Acquisition.held(records.of(election, current.get(), deadline, false)));
        }
        return Optional.empty();
      }
      previousTerm = held;
    }
    KeyValue granted =
        current.orElseThrow(() -> new LeaseStoreException(election, "etcd returned no key right after writing it"));
    calls.await(alive, deadline, election, "keeping the etcd lease alive");
    long token = granted.getModRevision();
    leases.granted(lease, election, token);
    if (previousTerm != null) {
      leases.forget(previousTerm.getLease(), election, previousTerm.getModRevision());
    }
    return Optional.of(
        Acquisition.granted(new Lease(election, candidate, FencingToken.of(token), reportedTtl(lease.grantedSeconds), handle(lease))));
  }

  private SharedLease reserve(long seconds, long deadline, String election) {
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      SharedLeases.Reservation reservation;
      try {
        reservation = leases.reserve(seconds);
      } catch (IllegalStateException e) {
        throw new LeaseStoreException(election, "the etcd lease store is closed", e);
      }
      if (reservation.lease() != null) {
        return reservation.lease();
      }
      calls.await(reservation.grant(), deadline, election, "granting an etcd lease of " + seconds + "s");
    }
    throw new LeaseStoreException(election, "could not obtain a live etcd lease of " + seconds + "s; try again");
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    long started = clock.nanoTime();
    long deadline = started + callTimeoutNanos;
    String election = lease.election();
    ensureOpen(election);
    long token = lease.token().value();
    long leaseId = leaseId(lease);
    SharedLease shared =
        leases
            .byId(leaseId)
            .orElseThrow(() -> lost(lease, "its etcd lease " + Long.toHexString(leaseId) + " expired or was revoked", null));
    CompletableFuture<Void> alive = shared.keepAlive(started, sharingNanos);
    ByteSequence key = key(election);
    CompletableFuture<Optional<KeyValue>> current = Calls.retryingAuth(() -> keyReads.read(key));
    calls.awaitBoth(alive, current, deadline, election);

    // A definite answer about the key or the lease decides, even if the other part failed.
    if (current.isDone() && !current.isCompletedExceptionally()) {
      Optional<KeyValue> kv = current.getNow(Optional.empty());
      if (kv.isEmpty()) {
        leases.forget(leaseId, election, token);
        throw lost(lease, "its key was deleted (expired or released)", null);
      }
      KeyValue found = kv.get();
      if (found.getModRevision() != token || found.getLease() != leaseId || !found.getValue().equals(bytes(lease.candidate()))) {
        leases.forget(leaseId, election, token);
        String holder = found.getValue().toString(UTF_8);
        throw lost(lease, "the key now holds " + holder + " (token " + found.getModRevision() + ")", holder);
      }
    }
    if (alive.isCompletedExceptionally() && EtcdErrors.isLeaseNotFound(Calls.failure(alive))) {
      leases.lost(shared);
      throw lost(lease, "its etcd lease " + Long.toHexString(leaseId) + " expired", null);
    }
    calls.await(current, deadline, election, "reading the election key");
    calls.await(alive, deadline, election, "keeping the etcd lease alive");
    return lease;
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    long deadline = clock.nanoTime() + callTimeoutNanos;
    String election = lease.election();
    ensureOpen(election);
    long token = lease.token().value();
    ByteSequence key = key(election);
    ByteSequence value = bytes(lease.candidate());
    try {
      calls.await(deleteIfTerm(key, token, value), deadline, election, "releasing the election key");
    } catch (LeaseStoreException e) {
      // Other elections may keep the shared etcd lease alive, and with it this key: keep trying
      // to delete it in the background, so that it cannot outlive the release by long.
      deleteLater(key, token, value, election, 1);
      throw e;
    } finally {
      parseLeaseId(lease.handle()).ifPresent(id -> leases.forget(id, election, token));
    }
  }

  /** Deletes the key only while it still shows this term: never somebody else's. */
  private CompletableFuture<TxnResponse> deleteIfTerm(ByteSequence key, long token, ByteSequence value) {
    return Calls.retryingAuth(
        () ->
            kv.txn()
                .If(
                    new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(token)),
                    new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(value)))
                .Then(Op.delete(key, DeleteOption.DEFAULT))
                .commit());
  }

  private void deleteLater(ByteSequence key, long token, ByteSequence value, String election, int attempt) {
    if (attempt > RELEASE_RETRIES || closed) {
      return;
    }
    CompletableFuture.delayedExecutor(1L << (attempt - 1), TimeUnit.SECONDS)
        .execute(
            () ->
                deleteIfTerm(key, token, value)
                    .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS)
                    .whenComplete(
                        (response, error) -> {
                          if (error != null) {
                            log.debug("Deleting the released key of election '{}' failed again (attempt {}): {}", election, attempt, EtcdErrors.unwrap(error).toString());
                            deleteLater(key, token, value, election, attempt + 1);
                          }
                        }));
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    checkElection(election);
    long deadline = clock.nanoTime() + callTimeoutNanos;
    ensureOpen(election);
    Optional<KeyValue> kv = calls.await(Calls.retryingAuth(() -> keyReads.read(key(election))), deadline, election, "reading the election key");
    return kv.map(found -> records.of(election, found, deadline, true));
  }

  /**
   * Runs {@code operations} in one etcd transaction only while {@code lease}'s term lasts: the
   * transaction compares the election key's {@code mod_revision} with the lease's fencing token, so
   * a leader whose term ended (expired, taken over) cannot write, however late its request arrives.
   *
   * @return etcd's response to the operations
   * @throws LeaseLostException when the term is over; none of the operations was applied
   * @throws LeaseStoreException when etcd could not answer within the call timeout
   */
  public TxnResponse guarded(Lease lease, List<Op> operations) {
    requireNonNull(lease, "lease");
    requireNonNull(operations, "operations");
    long deadline = clock.nanoTime() + callTimeoutNanos;
    String election = lease.election();
    ensureOpen(election);
    ByteSequence key = key(election);
    Op[] then = operations.toArray(Op[]::new);
    TxnResponse response =
        calls.await(
            Calls.retryingAuth(
                () ->
                    kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(lease.token().value())))
                        .Then(then)
                        .Else(Op.get(key, GetOption.DEFAULT))
                        .commit()),
            deadline,
            election,
            "guarded transaction");
    if (!response.isSucceeded()) {
      Optional<String> holder = firstKey(response).map(kv -> kv.getValue().toString(UTF_8));
      throw lost(lease, "term " + lease.token() + " is over" + holder.map(h -> "; " + h + " holds it now").orElse("") + "; nothing was written", holder.orElse(null));
    }
    return response;
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    checkElection(election);
    requireNonNull(changed, "changed");
    ensureOpen(election);
    ElectionWatch watch = new ElectionWatch(client.getWatchClient(), election, key(election), changed, watches::remove);
    watches.add(watch);
    watch.start();
    return Optional.of(watch);
  }

  /** etcd keys take any bytes; only an empty name, which would be the prefix itself, is refused. */
  @Override
  public void checkElectionName(String election) {
    requireNonNull(election, "election");
    if (election.isEmpty()) {
      throw new ConfigurationException("election name must not be empty");
    }
  }

  /** etcd deletes the key when its lease expires, and the watch sees that deletion. */
  @Override
  public boolean watchReportsExpiry() {
    return true;
  }

  @Override
  public String describe() {
    return description;
  }

  /** Stops the watches and revokes the etcd leases this store granted (which deletes their keys). */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    new ArrayList<>(watches).forEach(ElectionWatch::close);
    List<CompletableFuture<?>> revocations = leases.revokeAll();
    try {
      CompletableFuture.allOf(revocations.toArray(CompletableFuture[]::new)).get(callTimeoutNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      log.debug("Not every etcd lease of {} was revoked on close; they expire on their own: {}", description, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (ownsClient) {
      client.close();
    }
  }

  // ---- the election key and its record

  private ByteSequence key(String election) {
    return bytes(prefix + election);
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, UTF_8);
  }

  private boolean isOurs(KeyValue kv, ByteSequence candidate) {
    return kv.getValue().equals(candidate) && leases.byId(kv.getLease()).isPresent();
  }

  private static Optional<KeyValue> firstKey(TxnResponse response) {
    if (response.getGetResponses().isEmpty() || response.getGetResponses().get(0).getKvs().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(response.getGetResponses().get(0).getKvs().get(0));
  }

  // ---- TTLs and handles

  /** The etcd TTL for {@code ttl}: whole seconds, rounded up, plus the keep-alive sharing window. */
  private long etcdTtlSeconds(Duration ttl) {
    Duration withSharing = ttl.plus(keepAliveSharing);
    long seconds = withSharing.getSeconds() + (withSharing.getNano() > 0 ? 1 : 0);
    if (seconds > MAX_TTL_SECONDS) {
      throw new IllegalArgumentException("ttl must be at most " + (MAX_TTL_SECONDS - 1) + "s (etcd's limit), but was " + ttl);
    }
    return seconds;
  }

  /** What a grant on an etcd lease of {@code grantedSeconds} guarantees from a renewal's start. */
  private Duration reportedTtl(long grantedSeconds) {
    Duration granted = Duration.ofSeconds(grantedSeconds);
    Duration guaranteed = granted.minus(keepAliveSharing);
    return guaranteed.isNegative() || guaranteed.isZero() ? granted : guaranteed;
  }

  private static String handle(SharedLease lease) {
    return Long.toString(lease.id);
  }

  private static Optional<Long> parseLeaseId(String handle) {
    try {
      return Optional.of(Long.parseLong(handle));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  private long leaseId(Lease lease) {
    return parseLeaseId(lease.handle())
        .orElseThrow(() -> lost(lease, "its handle '" + lease.handle() + "' is not an etcd lease id of this store", null));
  }

  private static LeaseLostException lost(Lease lease, String why, String holder) {
    return new LeaseLostException(
        lease.election(), "lease of " + lease.candidate() + " (token " + lease.token() + ") is gone: " + why, holder);
  }

  private void ensureOpen(String election) {
    if (closed) {
      throw new LeaseStoreException(election, "the etcd lease store is closed");
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
