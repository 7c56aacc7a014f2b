package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a compare-and-set {@link RecordStore} (Kubernetes Leases, conditional writes, ETags) into
 * a {@link LeaseStore}, judging expiry the way client-go's {@code leaderelection} package does.
 * Every such backend gets its lease semantics from here; none repeats them.
 *
 * <p><b>Time.</b> A record carries no expiry instant that two machines could agree on. Instead,
 * each reader notes its own monotonic time when it first sees a record version, and treats the
 * holder as live until {@code observedAt + leaseDuration}, where {@code leaseDuration} is the one
 * <em>written in the record</em> (so a client-go holder's {@code leaseDurationSeconds} is honoured,
 * whatever this process would have chosen). A holder's write that started at {@code t0} lands
 * before any follower can see it, so no follower counts from earlier than {@code t0}: exclusion
 * holds without comparing clocks. The price, as in client-go, is that a follower that sees a
 * record for the first time waits a full lease duration, even if the holder died long ago; a
 * release (holder {@code ""}) is taken at once.
 *
 * <p><b>Writes.</b> Every grant, renewal and release is a {@link RecordStore#replace} guarded by
 * the version last read or written, so two candidates can never both succeed from one version.
 * {@code tryAcquire} reads once and writes once; when another write wins the race it reads again
 * to say who holds it, and makes one more attempt only if that read shows the election free (a
 * release or deletion raced with it). Each round trip is bounded by the record store's call
 * timeout. {@code renew} and {@code release} are one round trip each.
 *
 * <p><b>Durations</b> are stored in whole seconds, as Kubernetes does: a TTL is rounded up, and
 * the lease reports the TTL it really has.
 *
 * <p><b>Fencing.</b> The token is the record's {@code transitions} count. Every grant writes a
 * higher one, also a re-grant to the candidate that held it (client-go increments only when the
 * holder changes; a released record names no holder, so the two agree on takeovers). If somebody
 * deletes the record, the next grant creates it afresh: this store then continues from the highest
 * token it has seen for that election plus one, so tokens keep increasing for everyone who uses
 * this store object. A process that has never seen the old record starts again from 0, and a
 * downstream resource that remembers a higher token will refuse it until the count catches up:
 * do not delete a record that fences live data.
 *
 * <p>Safe for concurrent use. Closing it closes the record store, which in turn closes only what
 * it created itself.
 */
public final class ObservedTimeLeaseStore implements LeaseStore {

  private static final Logger log = LoggerFactory.getLogger(ObservedTimeLeaseStore.class);

  /** What client-go writes on release, so that any candidate's wait after seeing it is short. */
  private static final Duration RELEASED_LEASE_DURATION = Duration.ofSeconds(1);

  private static final int WRITE_ATTEMPTS = 2;

  private final RecordStore records;
  private final MonotonicClock clock;
  private final Clock wallClock;

  /** Per election: the version last seen and when this process first saw it. */
  private final ConcurrentMap<String, Observation> observations = new ConcurrentHashMap<>();

  /** Per election: the highest transitions count seen, so tokens survive a deleted record. */
  private final ConcurrentMap<String, Long> highestTokens = new ConcurrentHashMap<>();

  /** Per election and candidate: what a renewal must write back unchanged, and when it expires. */
  private final ConcurrentMap<GrantKey, Grant> grants = new ConcurrentHashMap<>();

  public ObservedTimeLeaseStore(RecordStore records) {
    this(records, MonotonicClock.system(), Clock.systemUTC());
  }

  /**
   * @param clock measures how long records stay unchanged
   * @param wallClock only for the acquire and renew times written for humans
   */
  public ObservedTimeLeaseStore(RecordStore records, MonotonicClock clock, Clock wallClock) {
    this.records = requireNonNull(records, "records");
    this.clock = requireNonNull(clock, "clock");
    this.wallClock = requireNonNull(wallClock, "wallClock");
  }

  private record Observation(String version, long observedAtNanos) {}

  private record GrantKey(String election, String candidate) {}

  private record Grant(long token, Instant acquireTime, long startedAtNanos) {}

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    requireNonNull(election, "election");
    requireNonNull(candidate, "candidate");
    requireNonNull(ttl, "ttl");
    if (candidate.isEmpty()) {
      throw new IllegalArgumentException("candidate must not be empty: an empty holder means released");
    }
    Duration effectiveTtl = wholeSecondsUp(ttl);
    long t0 = clock.nanoTime();
    Optional<VersionedRecord> current = records.read(election);
    for (int attempt = 1; ; attempt++) {
      Optional<LeaseRecord> holder = current.flatMap(r -> liveHolder(election, r));
      if (holder.isPresent() && !holder.get().holder().equals(candidate)) {
        return Acquisition.held(holder.get());
      }
      Instant now = wallClock.instant();
      long token = highestToken(election).map(t -> t + 1).orElse(0L);
      ElectionRecord grant = new ElectionRecord(candidate, effectiveTtl, now, now, token);
      Optional<VersionedRecord> written =
          current.isEmpty()
              ? records.create(election, grant)
              : records.replace(election, current.get().version(), grant);
      if (written.isPresent()) {
        observe(election, written.get());
        grants.put(new GrantKey(election, candidate), new Grant(token, now, t0));
        log.debug("election '{}': granted to {} with token {}", election, candidate, token);
        return Acquisition.granted(
            new Lease(election, candidate, FencingToken.of(token), effectiveTtl, written.get().version()));
      }
      // Another write came first. Say who holds it now; only if nobody does (it was released or
      // deleted meanwhile) is another try worthwhile.
      current = records.read(election);
      if (attempt == WRITE_ATTEMPTS) {
        Optional<VersionedRecord> last = current;
        return Acquisition.held(last.flatMap(r -> liveHolder(election, r)).orElseGet(() -> vacant(election, last)));
      }
    }
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    long t0 = clock.nanoTime();
    GrantKey key = new GrantKey(lease.election(), lease.candidate());
    Grant grant = grants.get(key);
    boolean known = grant != null && grant.token() == lease.token().value();
    if (known && t0 - (grant.startedAtNanos() + lease.ttl().toNanos()) >= 0) {
      // Past its TTL another candidate may have been granted already; a late renewal must not
      // pretend the lease never lapsed, even if nobody has written since.
      grants.remove(key, grant);
      throw new LeaseLostException(
          lease.election(), "lease of " + lease.candidate() + " (token " + lease.token() + ") expired before it was renewed", null);
    }
    Instant now = wallClock.instant();
    Instant acquireTime = known ? grant.acquireTime() : now;
    Duration ttl = wholeSecondsUp(lease.ttl());
    ElectionRecord renewed = new ElectionRecord(lease.candidate(), ttl, acquireTime, now, lease.token().value());
    Optional<VersionedRecord> written = records.replace(lease.election(), lease.handle(), renewed);
    if (written.isEmpty()) {
      if (known) {
        grants.remove(key, grant);
      }
      throw new LeaseLostException(
          lease.election(),
          "lease of " + lease.candidate() + " (token " + lease.token() + ") was taken over, released or deleted",
          null);
    }
    observe(lease.election(), written.get());
    grants.put(key, new Grant(lease.token().value(), acquireTime, t0));
    return lease.renewed(ttl, written.get().version());
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    GrantKey key = new GrantKey(lease.election(), lease.candidate());
    grants.computeIfPresent(key, (k, g) -> g.token() == lease.token().value() ? null : g);
    Instant now = wallClock.instant();
    ElectionRecord released = new ElectionRecord("", RELEASED_LEASE_DURATION, now, now, lease.token().value());
    // A conflict means the record changed since this lease was written: it is somebody else's
    // now (or ours under a newer token), and a release must never remove that.
    records.replace(lease.election(), lease.handle(), released).ifPresent(w -> observe(lease.election(), w));
  }

  /**
   * The holder while its lease is live as this process observes it: the same judgement {@link
   * #tryAcquire} makes, so a holder is shown exactly when another candidate would be refused.
   */
  @Override
  public Optional<LeaseRecord> read(String election) {
    requireNonNull(election, "election");
    return records.read(election).flatMap(r -> liveHolder(election, r));
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    requireNonNull(election, "election");
    requireNonNull(changed, "changed");
    return records.watch(election, changed);
  }

  /** Expiry is each follower's observation, not an event anybody could send. */
  @Override
  public boolean watchReportsExpiry() {
    return false;
  }

  @Override
  public void checkElectionName(String election) {
    records.checkElectionName(election);
  }

  @Override
  public String describe() {
    return records.describe();
  }

  @Override
  public void close() {
    records.close();
  }

  /** Notes the record as seen now unless this version was seen before, and returns the note. */
  private Observation observe(String election, VersionedRecord seen) {
    highestTokens.merge(election, seen.record().transitions(), Math::max);
    long now = clock.nanoTime();
    return observations.compute(
        election,
        (k, previous) ->
            previous != null && previous.version().equals(seen.version()) ? previous : new Observation(seen.version(), now));
  }

  private Optional<LeaseRecord> liveHolder(String election, VersionedRecord seen) {
    Observation observation = observe(election, seen);
    ElectionRecord record = seen.record();
    if (record.isReleased()) {
      return Optional.empty();
    }
    long now = clock.nanoTime();
    long remaining = observation.observedAtNanos() + record.leaseDuration().toNanos() - now;
    if (remaining <= 0) {
      return Optional.empty();
    }
    return Optional.of(
        new LeaseRecord(
            election,
            record.holder(),
            FencingToken.of(record.transitions()),
            record.leaseDuration(),
            Optional.of(record.renewTime()),
            Optional.of(Duration.ofNanos(remaining))));
  }

  /**
   * What to show when writes kept losing races yet nobody holds it: an empty holder, free at once.
   * Rare (a release or deletion raced with both attempts); the caller simply tries again.
   */
  private LeaseRecord vacant(String election, Optional<VersionedRecord> seen) {
    return new LeaseRecord(
        election,
        "",
        FencingToken.of(highestToken(election).orElse(0L)),
        seen.map(r -> r.record().leaseDuration()).orElse(Duration.ZERO),
        seen.map(r -> r.record().renewTime()),
        Optional.of(Duration.ZERO));
  }

  private Optional<Long> highestToken(String election) {
    return Optional.ofNullable(highestTokens.get(election));
  }

  /** Kubernetes stores whole seconds; rounding up keeps the TTL at least what was asked for. */
  static Duration wholeSecondsUp(Duration ttl) {
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive, but was " + ttl);
    }
    long seconds = ttl.getSeconds() + (ttl.getNano() > 0 ? 1 : 0);
    return Duration.ofSeconds(seconds);
  }
}
