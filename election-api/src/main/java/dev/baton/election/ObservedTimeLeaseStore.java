package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a compare-and-set {@link RecordStore} (Kubernetes Leases, conditional writes, ETags) into a
 * {@link LeaseStore}, judging expiry the way client-go's {@code leaderelection} package does. Every
 * such backend gets its lease semantics from here; none repeats them.
 *
 * <p><b>Time.</b> A record carries no expiry instant that two machines could agree on. Instead,
 * each reader notes its own monotonic time when it first sees a record version, and treats the
 * holder as live until {@code observedAt + leaseDuration}, where {@code leaseDuration} is the one
 * <em>written in the record</em> (so a client-go holder's {@code leaseDurationSeconds} is honoured,
 * whatever this process would have chosen). A holder's write that started at {@code t0} lands
 * before any follower can see it, so no follower counts from earlier than {@code t0}: exclusion
 * holds without comparing clocks. The price, as in client-go, is that a follower that sees a record
 * for the first time waits a full lease duration, even if the holder died long ago; a release
 * (holder {@code ""}) is taken at once.
 *
 * <p><b>Watching.</b> Where the record store can watch, every version it delivers counts as seen
 * when it arrives, so followers track renewals without asking. Watchers of an election hear only
 * what they can act on: the holder or the transitions count changed (a release, a takeover, a new
 * term), the record appeared or went, the watch broke, or the observed lease ran out, which a timer
 * on the scheduler reports ({@link #watchReportsExpiry()}), re-armed by each renewal seen.
 * Followers therefore send nothing while a holder renews.
 *
 * <p><b>Writes.</b> Every grant, renewal and release is a {@link RecordStore#replace} guarded by
 * the version last seen, so two candidates can never both succeed from one version. {@code
 * tryAcquire} starts from the record as a watch that is in step with the store last delivered it,
 * from nothing (a create) when this process has never been told of the election, else from a read;
 * it writes once, and when another write wins the race it reads to say who holds it, and makes one
 * more attempt only if that read shows the election free (a release or deletion raced with it). A
 * record seen late at worst costs that refused write: the version guard, not the freshness of what
 * was seen, decides. Each round trip is bounded by the record store's call timeout. {@code renew}
 * and {@code release} are one round trip each; {@code read} always reads. A renewal refused because
 * the record changed reads it once: if it still names the renewing holder and term, the change was
 * this holder's own renewal that landed after its call had timed out, and the renewal is written
 * again from the version seen, keeping the term. A release refused so does the same, so that a
 * graceful handover after such a renewal still takes milliseconds, not a lease. A grant whose write
 * got no answer is remembered: if the candidate's next try finds the record naming it under that
 * token, the late write was its own, and it is granted again from there (with a higher token)
 * instead of waiting out its own lease; a candidate that stops instead gives it back ({@link
 * #releaseUnanswered}) if the record is still exactly that grant.
 *
 * <p><b>Durations</b> are stored in whole seconds, as Kubernetes does: a TTL is rounded up, and the
 * lease reports the TTL it really has.
 *
 * <p><b>Deletion.</b> A record deleted while held (by an operator, a cleanup job) does not end the
 * holder's lease at once: the holder learns of it only when its next renewal fails, and may act
 * until then. So a process that saw the record held treats the holder as live until the lease it
 * saw runs out, as if the record were still there, and only then creates it afresh. A process that
 * never saw the record cannot know and creates it at once.
 *
 * <p><b>Fencing.</b> The token is the record's {@code transitions} count. Every grant writes a
 * higher one, also a grant to the candidate that held it last (client-go increments only when the
 * holder changes; a released record names no holder, so the two agree on takeovers). A live lease
 * is refused to its own holder's id too, as to anyone. If somebody deletes the record, the next
 * grant creates it afresh: this store then continues from the highest token it has seen for that
 * election plus one, so tokens keep increasing for everyone who uses this store object. A process
 * that has never seen the old record starts again from 0, and a downstream resource that remembers
 * a higher token will refuse it until the count catches up: do not delete a record that fences live
 * data.
 *
 * <p>Safe for concurrent use. Closing it closes the record store, which in turn closes only what it
 * created itself.
 */
public final class ObservedTimeLeaseStore implements LeaseStore {

  private static final Logger log = LoggerFactory.getLogger(ObservedTimeLeaseStore.class);

  /** What client-go writes on release, so that any candidate's wait after seeing it is short. */
  private static final Duration RELEASED_LEASE_DURATION = Duration.ofSeconds(1);

  private static final int WRITE_ATTEMPTS = 2;

  private final RecordStore records;
  private final MonotonicClock clock;
  private final Clock wallClock;
  private final ScheduledExecutorService scheduler;

  /** Per election: what this process last saw of the record, and who watches it. */
  private final ConcurrentMap<String, Sight> sights = new ConcurrentHashMap<>();

  /** Per election and candidate: what a renewal must write back unchanged, and when it expires. */
  private final ConcurrentMap<GrantKey, Grant> grants = new ConcurrentHashMap<>();

  /** Per election and candidate: the record of a grant whose write got no answer. */
  private final ConcurrentMap<GrantKey, ElectionRecord> unconfirmed = new ConcurrentHashMap<>();

  public ObservedTimeLeaseStore(RecordStore records) {
    this(records, MonotonicClock.system(), Clock.systemUTC());
  }

  /**
   * @param clock measures how long records stay unchanged
   * @param wallClock only for the acquire and renew times written for humans
   */
  public ObservedTimeLeaseStore(RecordStore records, MonotonicClock clock, Clock wallClock) {
    this(records, clock, wallClock, SharedExecutors.scheduler());
  }

  /**
   * @param scheduler runs the timers that tell watchers when an observed lease runs out; its tasks
   *     are short and never block
   */
  public ObservedTimeLeaseStore(
      RecordStore records,
      MonotonicClock clock,
      Clock wallClock,
      ScheduledExecutorService scheduler) {
    this.records = requireNonNull(records, "records");
    this.clock = requireNonNull(clock, "clock");
    this.wallClock = requireNonNull(wallClock, "wallClock");
    this.scheduler = requireNonNull(scheduler, "scheduler");
  }

  /** A version of an election's record and when this process first saw it. */
  private record Seen(String election, VersionedRecord record, long observedAtNanos) {}

  /**
   * Its equals and hashCode are written out: a record's own go through method handles, which a
   * handover runs uncompiled, at tens of microseconds a lookup on a two-core machine.
   */
  private record GrantKey(String election, String candidate) {

    @Override
    public boolean equals(Object o) {
      return o instanceof GrantKey k
          && election.equals(k.election)
          && candidate.equals(k.candidate);
    }

    @Override
    public int hashCode() {
      return election.hashCode() * 31 + candidate.hashCode();
    }
  }

  private record Grant(long token, Instant acquireTime, long startedAtNanos) {}

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    requireNonNull(election, "election");
    requireNonNull(candidate, "candidate");
    requireNonNull(ttl, "ttl");
    if (candidate.isEmpty()) {
      throw new IllegalArgumentException(
          "candidate must not be empty: an empty holder means released");
    }
    Duration effectiveTtl = wholeSecondsUp(ttl);
    long t0 = clock.nanoTime();
    GrantKey key = new GrantKey(election, candidate);
    Sight sight = sight(election);
    // A watch in step with the store has shown every change so far: what it showed last will do.
    // Knowing nothing of the election, the record is as likely absent as held: creating it at once
    // makes a first start one write instead of a read and a write, and a conflict costs the read
    // that would have come first.
    Optional<Seen> current = sight.inStep() || sight.neverSeen() ? sight.seen() : read(sight);
    for (int attempt = 1; ; attempt++) {
      Optional<LeaseRecord> holder =
          current.isPresent()
              ? current.flatMap(this::liveHolder)
              : sight.vanished().flatMap(this::liveHolder);
      if (holder.isPresent() && !isUnconfirmedGrant(key, current)) {
        // Also when the holder is this candidate id: a live lease is never granted again.
        return Acquisition.held(holder.get());
      }
      // Microseconds, as the stores keep it: a grant without answer is recognised by its record.
      Instant now = wallClock.instant().truncatedTo(ChronoUnit.MICROS);
      long token = sight.highestToken().map(t -> t + 1).orElse(0L);
      ElectionRecord grant = new ElectionRecord(candidate, effectiveTtl, now, now, token);
      Optional<VersionedRecord> written;
      try {
        written =
            current.isEmpty()
                ? records.create(election, grant)
                : records.replace(election, current.get().record().version(), grant);
      } catch (LeaseStoreException e) {
        // The server may apply the write after we stopped waiting: remembered, so that this
        // candidate's next try recognises the grant as its own instead of waiting it out.
        unconfirmed.put(key, grant);
        throw e;
      }
      if (written.isPresent()) {
        unconfirmed.remove(key);
        sight.note(written, null);
        grants.put(key, new Grant(token, now, t0));
        log.debug("election '{}': granted to {} with token {}", election, candidate, token);
        return Acquisition.granted(
            new Lease(
                election,
                candidate,
                FencingToken.of(token),
                effectiveTtl,
                written.get().version()));
      }
      // Another write came first (or what we started from was out of date). Say who holds it now;
      // only if nobody does (it was released or deleted meanwhile) is another try worthwhile.
      current = read(sight);
      if (attempt == WRITE_ATTEMPTS) {
        Optional<Seen> last = current;
        return Acquisition.held(
            last.flatMap(this::liveHolder).orElseGet(() -> vacant(sight, last)));
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
          lease.election(),
          "lease of "
              + lease.candidate()
              + " (token "
              + lease.token()
              + ") expired before it was renewed",
          null);
    }
    Instant now = wallClock.instant();
    Instant acquireTime = known ? grant.acquireTime() : now;
    Duration ttl = wholeSecondsUp(lease.ttl());
    ElectionRecord renewed =
        new ElectionRecord(lease.candidate(), ttl, acquireTime, now, lease.token().value());
    Optional<VersionedRecord> written = records.replace(lease.election(), lease.handle(), renewed);
    if (written.isEmpty()) {
      written = renewAfterOwnLateWrite(lease, renewed);
    }
    if (written.isEmpty()) {
      if (known) {
        grants.remove(key, grant);
      }
      throw new LeaseLostException(
          lease.election(),
          "lease of "
              + lease.candidate()
              + " (token "
              + lease.token()
              + ") was taken over, released or deleted",
          null);
    }
    sight(lease.election()).note(written, null);
    grants.put(key, new Grant(lease.token().value(), acquireTime, t0));
    return lease.renewed(ttl, written.get().version());
  }

  /**
   * Whether the record seen is this store's own grant whose write failed without an answer and was
   * applied all the same: the late write gave the election to this candidate and to nobody else, so
   * granting it to the same candidate again (from the version seen, with a higher token) keeps it
   * from waiting out a lease that is its own. The whole record must match, its acquire time to the
   * microsecond included, not only the holder and token: another process with the same candidate id
   * may have been granted from the same version with the same token, and that grant leads.
   */
  private boolean isUnconfirmedGrant(GrantKey key, Optional<Seen> current) {
    ElectionRecord mine = unconfirmed.get(key);
    return mine != null && current.isPresent() && current.get().record().record().equals(mine);
  }

  /**
   * A renewal refused for a changed version may have lost only to our own earlier renewal: one
   * whose write the server applied after the client stopped waiting for its answer. If the record
   * still names this holder and term, nobody else was granted in between (a grant changes the
   * holder or the transitions count), so renewing from the version seen now is as safe as the
   * refused write; client-go likewise reads before it writes and keeps leadership here.
   */
  private Optional<VersionedRecord> renewAfterOwnLateWrite(Lease lease, ElectionRecord renewed) {
    Optional<Seen> now = read(sight(lease.election()));
    if (now.isEmpty()) {
      return Optional.empty();
    }
    ElectionRecord record = now.get().record().record();
    if (!record.holder().equals(lease.candidate())
        || record.transitions() != lease.token().value()) {
      return Optional.empty();
    }
    log.debug(
        "election '{}': {} renews after its own write that was applied late",
        lease.election(),
        lease.candidate());
    return records.replace(lease.election(), now.get().record().version(), renewed);
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    GrantKey key = new GrantKey(lease.election(), lease.candidate());
    grants.computeIfPresent(key, (k, g) -> g.token() == lease.token().value() ? null : g);
    Instant now = wallClock.instant();
    ElectionRecord released =
        new ElectionRecord("", RELEASED_LEASE_DURATION, now, now, lease.token().value());
    // A conflict means the record changed since this lease was written: it is somebody else's
    // now (or ours under a newer token), and a release must never remove that.
    Optional<VersionedRecord> written = records.replace(lease.election(), lease.handle(), released);
    if (written.isEmpty()) {
      written = releaseAfterOwnLateWrite(lease, released);
    }
    if (written.isPresent()) {
      sight(lease.election()).note(written, null);
    }
  }

  /**
   * A release refused for a changed version may have lost only to this holder's own renewal that
   * the server applied after the client stopped waiting: the lease's handle is then out of date,
   * and without this the next leader would wait out a whole lease after a graceful handover. If the
   * record still names this holder and term, nobody else was granted in between, so releasing from
   * the version seen now is as safe as the refused write was.
   */
  private Optional<VersionedRecord> releaseAfterOwnLateWrite(Lease lease, ElectionRecord released) {
    Optional<Seen> now = read(sight(lease.election()));
    if (now.isEmpty() || !namesTerm(now.get(), lease.candidate(), lease.token().value())) {
      return Optional.empty();
    }
    log.debug(
        "election '{}': {} releases after its own write that was applied late",
        lease.election(),
        lease.candidate());
    return records.replace(lease.election(), now.get().record().version(), released);
  }

  /**
   * Releases the record of this candidate's grant whose write got no answer, if the record is still
   * exactly that grant: the whole record, its acquire time to the microsecond included, so that the
   * same id's grant in another process, made from the same version with the same token, is never
   * taken for ours (see {@link #isUnconfirmedGrant}). The release is guarded by the version read,
   * so a grant to anyone in between wins over it.
   */
  @Override
  public void releaseUnanswered(String election, String candidate) {
    requireNonNull(election, "election");
    requireNonNull(candidate, "candidate");
    GrantKey key = new GrantKey(election, candidate);
    ElectionRecord mine = unconfirmed.get(key);
    if (mine == null) {
      return;
    }
    Sight sight = sight(election);
    Optional<Seen> current = read(sight);
    if (isUnconfirmedGrant(key, current)) {
      Instant now = wallClock.instant();
      ElectionRecord released =
          new ElectionRecord("", RELEASED_LEASE_DURATION, now, now, mine.transitions());
      Optional<VersionedRecord> written =
          records.replace(election, current.get().record().version(), released);
      // Empty when somebody wrote in between: the record is theirs now, nothing of ours to give.
      if (written.isPresent()) {
        sight.note(written, null);
        log.debug(
            "election '{}': {} gave back its grant with token {} whose write got no answer",
            election,
            candidate,
            mine.transitions());
      }
    }
    // Given back, or not ours (any more): either way there is nothing left to recognise.
    unconfirmed.remove(key, mine);
  }

  private static boolean namesTerm(Seen seen, String candidate, long token) {
    ElectionRecord record = seen.record().record();
    return record.holder().equals(candidate) && record.transitions() == token;
  }

  /**
   * The holder while its lease is live as this process observes it: the same judgement {@link
   * #tryAcquire} makes, so a holder is shown exactly when another candidate would be refused.
   */
  @Override
  public Optional<LeaseRecord> read(String election) {
    requireNonNull(election, "election");
    Sight sight = sight(election);
    Optional<Seen> current = read(sight);
    return current.isPresent()
        ? current.flatMap(this::liveHolder)
        : sight.vanished().flatMap(this::liveHolder);
  }

  @Override
  public Optional<Subscription> watch(String election, Runnable changed) {
    requireNonNull(election, "election");
    requireNonNull(changed, "changed");
    Sight sight = sight(election);
    ElectionWatch watch = new ElectionWatch(sight, changed);
    sight.add(watch);
    Optional<Subscription> fromRecords;
    try {
      fromRecords = records.watch(election, watch);
    } catch (RuntimeException e) {
      watch.close();
      throw e;
    }
    if (fromRecords.isEmpty()) {
      watch.close();
      return Optional.empty();
    }
    watch.attach(fromRecords.get());
    return Optional.of(watch);
  }

  /**
   * Watches the record for its holder: every version the record store delivers names the holder and
   * the term (transitions count), so a takeover, a release or a deletion is told from the event
   * alone, and the leader's own renewals, which the watch delivers too, cost no read. Empty when
   * the record store cannot watch (the leader learns at its next renewal). See {@link
   * RecordLeaseWatch}.
   */
  @Override
  public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    requireNonNull(lease, "lease");
    requireNonNull(lost, "lost");
    RecordLeaseWatch watch = new RecordLeaseWatch(lease, lost);
    Optional<Subscription> fromRecords = records.watch(lease.election(), watch);
    if (fromRecords.isEmpty()) {
      return Optional.empty();
    }
    watch.attach(fromRecords.get());
    return Optional.of(watch);
  }

  /**
   * True: besides releases and takeovers, a watcher hears when the lease it last saw runs out as
   * this process observes it, so followers need not poll.
   */
  @Override
  public boolean watchReportsExpiry() {
    return true;
  }

  @Override
  public void checkElectionName(String election) {
    records.checkElectionName(election);
  }

  @Override
  public String describe() {
    return records.describe();
  }

  /** Closes the watches still open, and with them their timers, then the record store. */
  @Override
  public void close() {
    sights.values().forEach(Sight::closeWatches);
    records.close();
  }

  private Sight sight(String election) {
    return sights.computeIfAbsent(election, Sight::new);
  }

  private Optional<Seen> read(Sight sight) {
    return sight.note(records.read(sight.election), null);
  }

  private Optional<LeaseRecord> liveHolder(Seen seen) {
    ElectionRecord record = seen.record().record();
    if (record.isReleased()) {
      return Optional.empty();
    }
    long remaining = remainingNanos(seen);
    if (remaining <= 0) {
      return Optional.empty();
    }
    return Optional.of(
        new LeaseRecord(
            seen.election(),
            record.holder(),
            FencingToken.of(record.transitions()),
            record.leaseDuration(),
            Optional.of(record.renewTime()),
            Optional.of(Duration.ofNanos(remaining))));
  }

  private long remainingNanos(Seen seen) {
    return seen.observedAtNanos()
        + seen.record().record().leaseDuration().toNanos()
        - clock.nanoTime();
  }

  /**
   * What to show when writes kept losing races yet nobody holds it: an empty holder, free at once.
   * Rare (a release or deletion raced with both attempts); the caller simply tries again.
   */
  private LeaseRecord vacant(Sight sight, Optional<Seen> seen) {
    return new LeaseRecord(
        sight.election,
        "",
        FencingToken.of(sight.highestToken().orElse(0L)),
        seen.map(s -> s.record().record().leaseDuration()).orElse(Duration.ZERO),
        seen.map(s -> s.record().record().renewTime()),
        Optional.of(Duration.ZERO));
  }

  /**
   * Whether a follower could act on the change: the record came or went, or its holder or term
   * changed.
   */
  private static boolean changedHands(Seen before, Seen after) {
    if (before == null || after == null) {
      return before != after;
    }
    ElectionRecord was = before.record().record();
    ElectionRecord is = after.record().record();
    return !was.holder().equals(is.holder()) || was.transitions() != is.transitions();
  }

  /**
   * What this process knows of one election's record: the version it saw last and when it first saw
   * it, the highest token it has seen, and the watches to tell when something changes that a
   * follower can act on. Its monitor guards its fields; watchers are told outside it.
   */
  private final class Sight {
    private final String election;
    private final List<ElectionWatch> watches = new ArrayList<>();

    /** Null when no record was seen, or the last thing seen was its deletion. */
    private Seen seen;

    /**
     * A held record seen last before its deletion: its holder may lead on until its next renewal
     * fails, so others wait out its lease as if it were still there. Null once a record is seen.
     */
    private Seen vanished;

    private long highestToken = -1;

    /** Whether any read, write or watch has told this process about the record yet. */
    private boolean told;

    private int watchesInStep;
    private ScheduledFuture<?> expiry;

    /** The sighting {@link #expiry} was set for; a timer for any other is stale. */
    private Seen expiryFor;

    Sight(String election) {
      this.election = election;
    }

    synchronized Optional<Seen> seen() {
      return Optional.ofNullable(seen);
    }

    synchronized Optional<Seen> vanished() {
      return Optional.ofNullable(vanished);
    }

    /** What the expiry timer times: the record seen, else the held one that vanished. */
    private Seen timed() {
      return seen != null ? seen : vanished;
    }

    synchronized boolean neverSeen() {
      return !told;
    }

    synchronized Optional<Long> highestToken() {
      return highestToken < 0 ? Optional.empty() : Optional.of(highestToken);
    }

    /** Whether some watch has delivered the record since it opened or last broke. */
    synchronized boolean inStep() {
      return watchesInStep > 0;
    }

    /**
     * Notes {@code record} as the record now, seen now unless this version was seen before, and
     * tells the watches if it changed hands. {@code from} is the watch that delivered it, or null
     * for a read or a write's answer.
     */
    Optional<Seen> note(Optional<VersionedRecord> record, ElectionWatch from) {
      List<ElectionWatch> tell;
      Optional<Seen> now;
      synchronized (this) {
        told = true;
        Seen before = seen;
        if (record.isPresent()) {
          VersionedRecord r = record.get();
          highestToken = Math.max(highestToken, r.record().transitions());
          if (before == null || !before.record().version().equals(r.version())) {
            seen = new Seen(election, r, clock.nanoTime());
          }
          vanished = null;
        } else {
          if (before != null && !before.record().record().isReleased()) {
            vanished = before;
          }
          seen = null;
        }
        if (from != null && !from.closed && !from.inStep) {
          from.inStep = true;
          watchesInStep++;
        }
        if (seen != before) {
          armExpiry();
        }
        tell = changedHands(before, seen) ? List.copyOf(watches) : List.of();
        now = Optional.ofNullable(seen);
      }
      tell.forEach(ElectionWatch::tell);
      return now;
    }

    void closeWatches() {
      List<ElectionWatch> open;
      synchronized (this) {
        open = List.copyOf(watches);
      }
      open.forEach(ElectionWatch::close);
    }

    synchronized void add(ElectionWatch watch) {
      watches.add(watch);
      if (expiry == null) {
        armExpiry();
      }
    }

    synchronized void remove(ElectionWatch watch) {
      watches.remove(watch);
      outOfStep(watch);
      if (watches.isEmpty()) {
        cancelExpiry();
      }
    }

    synchronized void outOfStep(ElectionWatch watch) {
      if (watch.inStep) {
        watch.inStep = false;
        watchesInStep--;
      }
    }

    /** Times the end of the lease last seen, for the watches; a newer sighting re-arms it. */
    private void armExpiry() {
      Seen timed = timed();
      if (watches.isEmpty() || timed == null || timed.record().record().isReleased()) {
        cancelExpiry();
        return;
      }
      long remaining = remainingNanos(timed);
      // A renewal only moves the end later: a timer due no later finds the newer sighting when it
      // fires and sets itself again, so renewals seen cost no timer churn.
      if (expiry != null && expiry.getDelay(TimeUnit.NANOSECONDS) <= remaining) {
        return;
      }
      cancelExpiry();
      schedule(timed, remaining);
    }

    private void cancelExpiry() {
      if (expiry != null) {
        expiry.cancel(false);
        expiry = null;
        expiryFor = null;
      }
    }

    private void schedule(Seen due, long delayNanos) {
      try {
        expiryFor = due;
        expiry =
            scheduler.schedule(() -> expired(due), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        log.warn(
            "election '{}': cannot time when the lease of {} runs out, the scheduler refused; watchers will not hear of it",
            election,
            due.record().record().holder(),
            e);
      }
    }

    private void expired(Seen due) {
      List<ElectionWatch> tell;
      synchronized (this) {
        if (due != expiryFor) {
          return; // cancelled, and another timer set since
        }
        if (timed() != due) {
          expiry = null;
          expiryFor = null;
          armExpiry(); // seen again since: time the newer sighting
          return;
        }
        long remaining = remainingNanos(due);
        if (remaining > 0) {
          schedule(due, remaining); // the scheduler's clock ran ahead of ours
          return;
        }
        expiry = null;
        expiryFor = null;
        tell = List.copyOf(watches);
      }
      tell.forEach(ElectionWatch::tell);
    }
  }

  /** One caller's watch of an election, fed by a watch of the record store. */
  private final class ElectionWatch implements RecordStore.RecordWatcher, Subscription {
    private final Sight sight;
    private final Runnable changed;

    /** Guarded by the sight's monitor: delivered the record since it opened or last broke. */
    private boolean inStep;

    private volatile boolean closed;
    private Subscription fromRecords;

    ElectionWatch(Sight sight, Runnable changed) {
      this.sight = sight;
      this.changed = changed;
    }

    @Override
    public void seen(Optional<VersionedRecord> record) {
      if (!closed) {
        sight.note(record, this);
      }
    }

    @Override
    public void lost() {
      if (!closed) {
        sight.outOfStep(this);
        tell(); // what it missed may matter: let the caller look
      }
    }

    void attach(Subscription subscription) {
      synchronized (this) {
        if (!closed) {
          fromRecords = subscription;
          return;
        }
      }
      subscription.close();
    }

    void tell() {
      if (closed) {
        return;
      }
      try {
        changed.run();
      } catch (RuntimeException e) {
        log.warn("election '{}': a watcher failed", sight.election, e);
      }
    }

    @Override
    public void close() {
      closed = true;
      sight.remove(this);
      Subscription s;
      synchronized (this) {
        s = fromRecords;
        fromRecords = null;
      }
      if (s != null) {
        s.close();
      }
    }
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
