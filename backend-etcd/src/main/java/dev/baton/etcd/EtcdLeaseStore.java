package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.election.Renewal;
import dev.baton.election.Subscription;
import dev.baton.election.UrlSecrets;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * id. It is attached to an etcd lease, so etcd deletes it when the lease expires: expiry is judged
 * by etcd alone. The key is written only in transactions guarded by what the key was (absent, or
 * the exact revision of a released key or of the caller's own term), and the fencing token is the
 * key's {@code mod_revision}: every grant writes the key, so every grant gets a higher token, while
 * renewals only keep the etcd lease alive and keep it. {@link #guarded} makes the leader's own etcd
 * writes conditional on its term.
 *
 * <p><b>Leases.</b> By default every election gets an etcd lease of its own, with exactly the TTL
 * asked for, rounded up to whole seconds (etcd counts whole seconds; a TTL under one second, or
 * under etcd's own minimum, gets the smallest TTL etcd grants, and {@link Lease#ttl()} reports the
 * TTL applied). A renewal sends that lease's keep-alive and confirms the key; a holder that stops
 * renewing loses its key one TTL after its last renewal began, plus up to half a second until
 * etcd's expiry check sees it. A release leaves the key on its lease with a value that marks it
 * released (and names the lease's TTL); the next holder takes the key and the lease over in one
 * transaction, sent with a keep-alive of that lease, so a graceful handover needs no lease grant,
 * and the releasing store never renews or revokes that lease again. Candidate ids may not begin
 * with a NUL character, which the marker does. An acquisition that had to grant a lease and then
 * found the election held keeps that lease, unrenewed, for the store's next acquisition while it is
 * young. A store that only follows sends next to nothing while nothing changes: its watch reports
 * releases and expiry (the elector still looks every 30 s or two lease durations, in case a watch
 * died without a word).
 *
 * <p><b>Shared leases</b> ({@link Builder#sharedLeases}), for a process that leads hundreds of
 * elections or more: all elections of the store with the same TTL share one etcd lease, so renewing
 * a batch of them ({@link #renewAll}) costs one keep-alive plus reads, where separate leases cost a
 * keep-alive each. In exchange, one election's key lives as long as any election on the lease is
 * renewed, and a new holder grants or reuses a lease of its own rather than taking the released one
 * over. Renewals within {@code keepAliveSharing} of each other share one keep-alive; to keep the
 * lease contract exact despite that, the etcd lease is granted that much longer ({@link
 * Lease#ttl()} is the etcd TTL minus {@code keepAliveSharing}), so a crashed holder's key lives up
 * to that much longer.
 *
 * <p>Every call returns or throws within the call timeout. A store built with {@link
 * #builder(Client)} never closes the client; {@link #close()} revokes the etcd leases of the
 * elections it still holds, which deletes their keys.
 */
public final class EtcdLeaseStore implements LeaseStore {

  public static final String DEFAULT_PREFIX = "/baton/elections/";
  public static final Duration DEFAULT_CALL_TIMEOUT = CallTimeout.DEFAULT;

  private static final Logger log = LoggerFactory.getLogger(EtcdLeaseStore.class);

  /** etcd's largest lease TTL, in seconds. */
  private static final long MAX_TTL_SECONDS = 9_000_000_000L;

  /** Background attempts to delete a key whose release failed: after 1, 2, 4, 8 and 16 s. */
  private static final int RELEASE_RETRIES = 5;

  /** etcd's default {@code --max-txn-ops}: the most operations it takes in one transaction. */
  public static final int DEFAULT_MAX_TXN_OPS = 128;

  /**
   * The most {@link Builder#maxTxnOps} takes: that many comparisons of long keys stay well within
   * etcd's default request size limit ({@code --max-request-bytes}, 1.5 MiB).
   */
  static final int MAX_TXN_OPS_LIMIT = 8_192;

  /**
   * With shared leases one {@link #renewAll} takes up to eight confirming transactions' worth: one
   * keep-alive and eight transactions, a few milliseconds of a client's time.
   */
  private static final int SHARED_TRANSACTIONS_PER_BATCH = 8;

  /**
   * With a lease per election each lease needs a keep-alive of its own (about 0.1 to 0.3 ms of
   * client CPU each, measured), so a batch stays at what keeps a call well within any call timeout.
   */
  private static final int OWN_LEASE_RENEW_BATCH_LIMIT = DEFAULT_MAX_TXN_OPS;

  /** Elections whose keys are kept built: far more than one process leads or follows. */
  private static final int KEY_CACHE_LIMIT = 65_536;

  private final Client client;
  private final KV kv;
  private final boolean closesClient;
  private final String prefix;
  private final long callTimeoutNanos;
  private final Duration keepAliveSharing;
  private final long sharingNanos;
  private final int maxTxnOps;
  private final String description;
  private final MonotonicClock clock;
  private final Calls calls;
  private final EtcdLeases leases;
  private final KeyReads keyReads;
  private final HolderRecords records;
  private final Acquisitions acquisitions;
  private final Renewals renewals;
  private final Set<ElectionWatch> watches = ConcurrentHashMap.newKeySet();
  private final Set<LeaseWatch> leaseWatches = ConcurrentHashMap.newKeySet();

  /**
   * Election keys as etcd bytes. Building one per call cost a fifth of the renewing threads' time
   * with 10,000 elections: jetcd's ByteSequence hashes every byte when it is made.
   */
  private final Map<String, ByteSequence> keys = new ConcurrentHashMap<>();

  private volatile boolean closed;

  private EtcdLeaseStore(Builder b) {
    this.client = b.client;
    this.kv = b.client.getKVClient();
    this.closesClient = b.closesClient;
    this.clock = b.clock;
    this.prefix = b.prefix;
    this.callTimeoutNanos = b.callTimeout.toNanos();
    this.keepAliveSharing = b.keepAliveSharing == null ? Duration.ZERO : b.keepAliveSharing;
    this.sharingNanos = keepAliveSharing.toNanos();
    this.maxTxnOps = b.maxTxnOps;
    this.description =
        "etcd"
            + (b.endpoints == null ? "" : " at " + UrlSecrets.redact(b.endpoints))
            + " under "
            + b.prefix
            + (b.keepAliveSharing == null
                ? ""
                : ", shared leases (keep-alive sharing " + keepAliveSharing.toMillis() + " ms)")
            + (b.maxTxnOps == DEFAULT_MAX_TXN_OPS
                ? ""
                : ", " + b.maxTxnOps + " operations per transaction");
    this.calls = new Calls(clock, b.callTimeout);
    this.leases =
        new EtcdLeases(
            b.client.getLeaseClient(), clock, callTimeoutNanos, b.keepAliveSharing != null);
    this.keyReads = new KeyReads(kv, callTimeoutNanos, maxTxnOps);
    this.records = new HolderRecords(b.client.getLeaseClient(), leases, calls, this::reportedTtl);
    this.acquisitions =
        new Acquisitions(
            kv,
            b.client.getLeaseClient(),
            leases,
            keyReads,
            records,
            calls,
            clock,
            callTimeoutNanos,
            sharingNanos,
            this::key,
            this::reportedTtl);
    this.renewals =
        new Renewals(
            kv, leases, keyReads, clock, callTimeoutNanos, sharingNanos, maxTxnOps, this::key);
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

    /** Null: a lease per election. */
    private Duration keepAliveSharing;

    private int maxTxnOps = DEFAULT_MAX_TXN_OPS;
    private MonotonicClock clock = MonotonicClock.system();
    private boolean closesClient;
    private String endpoints;

    private Builder(Client client) {
      this.client = client;
    }

    /** Where election keys live: {@code <prefix><election>}. Default {@value #DEFAULT_PREFIX}. */
    public Builder prefix(String prefix) {
      requireNonNull(prefix, "prefix");
      if (prefix.isEmpty()) {
        throw new ConfigurationException(
            "prefix: '' is not accepted; give a non-empty key prefix (default "
                + DEFAULT_PREFIX
                + ")");
      }
      this.prefix = prefix;
      return this;
    }

    /**
     * The longest any call may take (default 3 s): at most half the renew deadline it is used with
     * ({@link CallTimeout}). An etcd leader change stalls writes for several seconds (see
     * docs/etcd.md).
     */
    public Builder callTimeout(Duration callTimeout) {
      this.callTimeout = CallTimeout.check("callTimeout", callTimeout);
      return this;
    }

    /**
     * Shares one etcd lease among all elections of the store with the same TTL instead of giving
     * each its own: for a process that leads hundreds of elections or more, whose renewals then
     * cost one keep-alive per batch instead of one per election. One election's key then lives as
     * long as any election on the lease is renewed, and a graceful handover to this store cannot
     * take the released lease over (see the class description).
     *
     * @param keepAliveSharing how old a keep-alive may be and still serve a renewal of another
     *     election on the same etcd lease. Zero: every renewal (or batch of renewals) sends its own
     *     and the etcd lease has exactly the TTL asked for. Longer shares more; the etcd lease is
     *     granted this much longer, which delays takeover after a crash by up to this much.
     */
    public Builder sharedLeases(Duration keepAliveSharing) {
      requireNonNull(keepAliveSharing, "keepAliveSharing");
      if (keepAliveSharing.isNegative() || keepAliveSharing.compareTo(Duration.ofSeconds(10)) > 0) {
        throw new ConfigurationException(
            "keepAliveSharing: " + keepAliveSharing.toMillis() + "ms must be from 0 to 10s");
      }
      this.keepAliveSharing = keepAliveSharing;
      return this;
    }

    /**
     * The most operations the store puts in one transaction: set it to the cluster's {@code
     * --max-txn-ops} when that is above etcd's default of {@value #DEFAULT_MAX_TXN_OPS}. Renewals
     * of many elections then confirm their keys in that many fewer transactions (with 10,000
     * elections on shared leases, 1,024 cut the client's CPU by about a third, measured). More than
     * the cluster allows makes every batched renewal fail, with an error that says so.
     */
    public Builder maxTxnOps(int maxTxnOps) {
      if (maxTxnOps < 1 || maxTxnOps > MAX_TXN_OPS_LIMIT) {
        throw new ConfigurationException(
            "maxTxnOps: "
                + maxTxnOps
                + " must be from 1 to "
                + MAX_TXN_OPS_LIMIT
                + " (etcd's --max-txn-ops; its default is "
                + DEFAULT_MAX_TXN_OPS
                + ")");
      }
      this.maxTxnOps = maxTxnOps;
      return this;
    }

    /** The clock that measures calls and leases on this side; the system's by default. */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    /** For the provider: the store closes the client it was given, which the provider built. */
    Builder closesClient() {
      this.closesClient = true;
      return this;
    }

    /** For the provider: the endpoints its client connects to, for {@link #describe()}. */
    Builder endpoints(String endpoints) {
      this.endpoints = requireNonNull(endpoints, "endpoints");
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
    if (candidate.startsWith("\u0000")) {
      throw new IllegalArgumentException(
          "candidate id must not begin with a NUL character (etcd keys of released elections do), but was "
              + candidate.replace("\u0000", "\\0"));
    }
    long started = clock.nanoTime();
    long deadline = started + callTimeoutNanos;
    ensureOpen(election);
    return acquisitions.acquire(election, candidate, etcdTtlSeconds(ttl), started, deadline);
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    ensureOpen(lease.election());
    return renewals.renew(lease);
  }

  /**
   * Renews up to {@link #renewBatchLimit()} leases in one round trip's time: one keep-alive per
   * distinct etcd lease, and one read-only transaction per {@link Builder#maxTxnOps} keys (128 by
   * default) that confirms each still shows its term, all sent at once. Each lease gets the outcome
   * {@link #renew} would give it.
   */
  @Override
  public List<Renewal> renewAll(List<Lease> leasesToRenew) {
    requireNonNull(leasesToRenew, "leases");
    if (leasesToRenew.size() > renewBatchLimit()) {
      throw new IllegalArgumentException(
          "renewAll takes at most "
              + renewBatchLimit()
              + " leases (renewBatchLimit), but got "
              + leasesToRenew.size());
    }
    if (!leasesToRenew.isEmpty()) {
      ensureOpen(leasesToRenew.get(0).election());
    }
    return renewals.renewAll(leasesToRenew);
  }

  @Override
  public int renewBatchLimit() {
    return leases.shared()
        ? SHARED_TRANSACTIONS_PER_BATCH * maxTxnOps
        : Math.min(maxTxnOps, OWN_LEASE_RENEW_BATCH_LIMIT);
  }

  /**
   * Deletes the election key where it holds {@code candidate}'s term on an etcd lease of this store
   * that no term holds: a grant whose answer never came. Without this an elector that stops after
   * such a call leaves the key to its lease's TTL (the lease is this store's until {@link #close()}
   * revokes it, and an elector's close does not close its store).
   */
  @Override
  public void releaseUnanswered(String election, String candidate) {
    checkElection(election);
    requireNonNull(candidate, "candidate");
    long deadline = clock.nanoTime() + callTimeoutNanos;
    ensureOpen(election);
    acquisitions.releaseUnanswered(election, candidate, deadline);
  }

  /**
   * Gives the election up in one transaction guarded by the releasing term. With a lease per
   * election, the key stays on its lease marked released, for the next holder to take over, and
   * this store forgets the lease; with shared leases the key is deleted.
   */
  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    long deadline = clock.nanoTime() + callTimeoutNanos;
    String election = lease.election();
    ensureOpen(election);
    long token = lease.token().value();
    ByteSequence key = key(election);
    ByteSequence value = bytes(lease.candidate());
    Optional<EtcdLease> held = parseLeaseId(lease.handle()).flatMap(leases::byId);
    try {
      if (!leases.shared() && held.isPresent()) {
        EtcdLease on = held.get();
        leases.handingOn(on.id);
        PutOption onLease = PutOption.builder().withLeaseId(on.id).build();
        calls.await(
            Calls.retryingAuth(
                () ->
                    kv.txn()
                        .If(
                            new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(token)),
                            new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(value)))
                        .Then(Op.put(key, ReleaseMarker.value(on.requestedSeconds), onLease))
                        .commit()),
            deadline,
            election,
            "releasing the election key");
        leases.released(on.id);
      } else {
        calls.await(
            Acquisitions.deleteIfTerm(kv, key, token, value),
            deadline,
            election,
            "releasing the election key");
      }
    } catch (LeaseStoreException e) {
      if (EtcdErrors.isLeaseNotFound(e)) {
        // The lease ran out before the release: etcd deleted the key with it. Nothing to give up.
        return;
      }
      // Whether it was applied is unknown. The key may still be ours: recognise it as such should
      // this candidate acquire again, and keep trying to delete it in the background (only while it
      // shows this term), so that it cannot outlive the release by long. A shared lease other
      // elections keep alive would keep it; a lease of its own nobody renews, so it ends within its
      // TTL.
      held.ifPresent(on -> leases.outcomeUnknown(on.id));
      deleteLater(key, token, value, election, 1);
      throw e;
    } finally {
      held.ifPresent(on -> leases.forget(on.id, election, token));
    }
  }

  private void deleteLater(
      ByteSequence key, long token, ByteSequence value, String election, int attempt) {
    if (attempt > RELEASE_RETRIES || closed) {
      return;
    }
    CompletableFuture.delayedExecutor(
            1L << (attempt - 1), TimeUnit.SECONDS, ElectionWatch.ON_TIMER_THREAD)
        .execute(
            () ->
                Acquisitions.deleteIfTerm(kv, key, token, value)
                    .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS)
                    .whenComplete(
                        (response, error) -> {
                          if (error != null) {
                            log.debug(
                                "Deleting the released key of election '{}' failed again (attempt {}): {}",
                                election,
                                attempt,
                                EtcdErrors.unwrap(error).toString());
                            deleteLater(key, token, value, election, attempt + 1);
                          }
                        }));
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    checkElection(election);
    long deadline = clock.nanoTime() + callTimeoutNanos;
    ensureOpen(election);
    Optional<KeyValue> kv =
        calls.await(
            Calls.retryingAuth(() -> keyReads.read(key(election))),
            deadline,
            election,
            "reading the election key");
    return kv.filter(found -> !ReleaseMarker.isMarker(found))
        .map(found -> records.of(election, found, deadline, true));
  }

  /**
   * Runs {@code operations} in one etcd transaction only while {@code lease}'s term lasts: the
   * transaction compares the election key's {@code mod_revision} with the lease's fencing token, so
   * a leader whose term ended (expired, released, taken over) cannot write, however late its
   * request arrives.
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
                        .If(
                            new Cmp(
                                key, Cmp.Op.EQUAL, CmpTarget.modRevision(lease.token().value())))
                        .Then(then)
                        .Else(Op.get(key, GetOption.DEFAULT))
                        .commit()),
            deadline,
            election,
            "guarded transaction");
    if (!response.isSucceeded()) {
      Optional<String> holder =
          Acquisitions.firstKey(response)
              .filter(kv -> !ReleaseMarker.isMarker(kv))
              .map(kv -> kv.getValue().toString(UTF_8));
      throw Renewals.lost(
          lease,
          "term "
              + lease.token()
              + " is over"
              + holder.map(h -> "; " + h + " holds it now").orElse("")
              + "; nothing was written",
          holder.orElse(null));
    }
    return response;
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    checkElection(election);
    requireNonNull(changed, "changed");
    ensureOpen(election);
    ElectionWatch watch =
        new ElectionWatch(
            client.getWatchClient(),
            election,
            key(election),
            changed,
            acquisitions,
            watches::remove,
            Duration.ofNanos(callTimeoutNanos));
    watches.add(watch);
    watch.start();
    return Optional.of(watch);
  }

  /**
   * Watches the lease's key from the revision after its grant: a deletion (its etcd lease expired
   * or was revoked, an operator) or a write by anyone else reports the loss within one watch
   * delivery. Renewals do not write the key, so they cost this watch nothing (see {@link
   * LeaseWatch}).
   */
  @Override
  public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    requireNonNull(lease, "lease");
    requireNonNull(lost, "lost");
    checkElection(lease.election());
    ensureOpen(lease.election());
    LeaseWatch watch =
        new LeaseWatch(
            client.getWatchClient(),
            lease.election(),
            key(lease.election()),
            lease.token().value(),
            lost,
            leaseWatches::remove);
    leaseWatches.add(watch);
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

  /**
   * Stops the watches and revokes the etcd leases of the elections this store still holds (which
   * deletes their keys, so the next candidates need not wait for them to expire) and its spare.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    new ArrayList<>(watches).forEach(ElectionWatch::close);
    new ArrayList<>(leaseWatches).forEach(LeaseWatch::close);
    List<CompletableFuture<?>> revocations = leases.revokeAll();
    try {
      CompletableFuture.allOf(revocations.toArray(CompletableFuture[]::new))
          .get(callTimeoutNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      log.debug(
          "Not every etcd lease of {} was revoked on close; they expire on their own: {}",
          description,
          e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closesClient) {
      client.close();
    }
  }

  // ---- the election key and its record

  private ByteSequence key(String election) {
    ByteSequence key = keys.get(election);
    if (key == null) {
      key = bytes(prefix + election);
      // Bounded so that elections named afresh for each job cannot grow it without end; past the
      // bound, keys are built per call as they would be without it.
      if (keys.size() < KEY_CACHE_LIMIT) {
        keys.putIfAbsent(election, key);
      }
    }
    return key;
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, UTF_8);
  }

  // ---- TTLs and handles

  /**
   * The etcd TTL for {@code ttl}: whole seconds, rounded up, plus any keep-alive sharing window.
   */
  private long etcdTtlSeconds(Duration ttl) {
    Duration withSharing = ttl.plus(keepAliveSharing);
    long seconds = withSharing.getSeconds() + (withSharing.getNano() > 0 ? 1 : 0);
    if (seconds > MAX_TTL_SECONDS) {
      throw new IllegalArgumentException(
          "ttl must be at most " + (MAX_TTL_SECONDS - 1) + "s (etcd's limit), but was " + ttl);
    }
    return seconds;
  }

  /** What a grant on an etcd lease of {@code grantedSeconds} guarantees from a renewal's start. */
  private Duration reportedTtl(long grantedSeconds) {
    Duration granted = Duration.ofSeconds(grantedSeconds);
    Duration guaranteed = granted.minus(keepAliveSharing);
    return guaranteed.isNegative() || guaranteed.isZero() ? granted : guaranteed;
  }

  private static Optional<Long> parseLeaseId(String handle) {
    try {
      return Optional.of(Long.parseLong(handle));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
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
