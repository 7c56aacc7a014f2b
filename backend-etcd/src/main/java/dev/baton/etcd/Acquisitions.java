package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.baton.election.Acquisition;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acquisitions: one transaction that writes the election key only if it still is what the store
 * last saw (absent, released, or the caller's own leftover of a call whose outcome was unknown),
 * with the etcd lease it goes on confirmed alive at the same time. Where it starts is what the
 * store's watches last saw of the key, so a follower woken by a release or a deletion goes straight
 * to that transaction; a follower that knows nothing, or saw a holder, reads the key first, so that
 * it does not grant (and then keep alive) an etcd lease only to learn that the election is held.
 */
final class Acquisitions implements ElectionWatch.Sightings {

  private static final Logger log = LoggerFactory.getLogger(Acquisitions.class);

  /** How often a step that found the state changed under it is tried again within one call. */
  private static final int ATTEMPTS = 3;

  private final KV kv;
  private final io.etcd.jetcd.Lease leaseClient;
  private final EtcdLeases leases;
  private final KeyReads keyReads;
  private final HolderRecords records;
  private final Calls calls;
  private final MonotonicClock clock;
  private final long callTimeoutNanos;
  private final long sharingNanos;
  private final Function<String, ByteSequence> keyOf;
  private final LongFunction<Duration> reportedTtl;

  /** The election keys as the store's watches last saw them. */
  private final Map<String, Sighting> sightings = new ConcurrentHashMap<>();

  Acquisitions(
      KV kv,
      io.etcd.jetcd.Lease leaseClient,
      EtcdLeases leases,
      KeyReads keyReads,
      HolderRecords records,
      Calls calls,
      MonotonicClock clock,
      long callTimeoutNanos,
      long sharingNanos,
      Function<String, ByteSequence> keyOf,
      LongFunction<Duration> reportedTtl) {
    this.kv = kv;
    this.leaseClient = leaseClient;
    this.leases = leases;
    this.keyReads = keyReads;
    this.records = records;
    this.calls = calls;
    this.clock = clock;
    this.callTimeoutNanos = callTimeoutNanos;
    this.sharingNanos = sharingNanos;
    this.keyOf = keyOf;
    this.reportedTtl = reportedTtl;
  }

  /**
   * Grants {@code election} to {@code candidate} on an etcd lease of {@code seconds}, or tells who
   * holds it.
   */
  Acquisition acquire(
      String election, String candidate, long seconds, long started, long deadline) {
    ByteSequence key = keyOf.apply(election);
    ByteSequence value = ByteSequence.from(candidate, UTF_8);
    // Where to start: the key as the watch last saw it. A release or a deletion seen there goes
    // straight to the transaction that takes the key; a holder seen there, or nothing, is looked
    // at first, so that a follower does not keep an etcd lease alive only to learn that the
    // election is held. The transaction decides in every case.
    Sighting seen = sightings.get(election);
    KeyValue current = seen == null ? null : seen.kv();
    boolean known =
        seen != null
            && (current == null || ReleaseMarker.isMarker(current) || isOurs(current, value));
    if (!known && !(seen == null && leases.shared() && leases.hasReady(seconds))) {
      if (seen == null) {
        // Knowing nothing, the key is as likely free as held: a lease granted meanwhile saves a
        // round trip if it is free, and waits as the spare if it is held.
        leases.prepareSpare(seconds);
      }
      Optional<KeyValue> read =
          calls.await(
              Calls.retryingAuth(() -> keyReads.read(key)),
              deadline,
              election,
              "reading the election key");
      current = read.orElse(null);
      // A key of ours read before a release of ours that has ended since is gone, not held: the
      // transaction, conditional on it, finds what is there now.
      if (current != null
          && !ReleaseMarker.isMarker(current)
          && !isOurs(current, value)
          && !releasedHere(current, value)) {
        return Acquisition.held(records.of(election, current, deadline, false));
      }
    }
    boolean mayTakeOverLease = true;
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      Step step =
          acquireStep(
              election,
              candidate,
              key,
              value,
              seconds,
              current,
              mayTakeOverLease,
              started,
              deadline);
      if (step.outcome != null) {
        return step.outcome;
      }
      current = step.current;
      mayTakeOverLease &= !step.leaseGone;
    }
    throw new LeaseStoreException(
        election,
        "the election key or its etcd lease kept changing during "
            + ATTEMPTS
            + " attempts; try again");
  }

  /** What one transaction found: the acquisition's outcome, or the key to start the next from. */
  private record Step(Acquisition outcome, KeyValue current, boolean leaseGone) {
    static Step done(Acquisition outcome) {
      return new Step(outcome, null, false);
    }
  }

  /**
   * One transaction that writes the key only if it still is {@code current} (null: absent): on a
   * lease taken over from a release, on this store's lease of a new term of ours, or on a lease
   * reserved here (the spare, the shared lease, or a fresh grant).
   */
  private Step acquireStep(
      String election,
      String candidate,
      ByteSequence key,
      ByteSequence value,
      long seconds,
      KeyValue current,
      boolean mayTakeOverLease,
      long started,
      long deadline) {
    Cmp unchanged =
        current == null
            ? new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0))
            : new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(current.getModRevision()));
    if (current != null && heldHere(election, current, value)) {
      // A live lease is never granted again, not even to its holder's id: the key shows a term of
      // this candidate on an etcd lease this store keeps (another elector here with the same id,
      // or this one's own lease whose release did not get through).
      return Step.done(Acquisition.held(records.of(election, current, deadline, false)));
    }
    // Ours now only on a lease dropped with a write's outcome unknown: a dead leftover no elector
    // holds, which expires unrenewed; a new term of ours takes it.
    boolean ours = current != null && isOurs(current, value);
    if (mayTakeOverLease
        && !leases.shared()
        && current != null
        && !ours
        && current.getLease() != 0
        && ReleaseMarker.requestedSeconds(current).orElse(-1) == seconds) {
      return takeOver(
          election, candidate, key, value, seconds, current, unchanged, started, deadline);
    }
    // A new term of ours stays on its own lease; shared leases are reserved like any acquisition's.
    Optional<EtcdLease> own =
        ours && !leases.shared()
            ? leases.reserveHeld(current.getLease(), seconds)
            : Optional.empty();
    EtcdLease lease = own.isPresent() ? own.get() : reserve(seconds, deadline, election);
    try {
      // The transaction first, as it takes longest (a write through raft); then what confirms that
      // the lease lives for a TTL from `started`: nothing for a lease granted since, a keep-alive
      // for the spare, a shared or a held lease. Both are under way at once.
      CompletableFuture<TxnResponse> written = commit(key, unchanged, value, lease.id);
      CompletableFuture<Void> alive = lease.keepAlive(started, sharingNanos);
      TxnResponse response = calls.await(written, deadline, election, "writing the election key");
      if (!response.isSucceeded()) {
        return changed(election, value, deadline, response);
      }
      long token = response.getHeader().getRevision();
      try {
        calls.await(alive, deadline, election, "keeping the etcd lease alive");
      } catch (LeaseStoreException e) {
        if (!EtcdErrors.isLeaseNotFound(e)) {
          // The key is ours, but unconfirmed its lease may end before our TTL: give it up.
          deleteIfTerm(kv, key, token, value);
          throw e;
        }
        // The lease expired under the new key, which went with it: grant a fresh one and start
        // over.
        leases.lost(lease);
        return new Step(null, null, false);
      }
      leases.granted(lease, election, token);
      if (ours) {
        leases.forget(current.getLease(), election, current.getModRevision());
      }
      return Step.done(
          Acquisition.granted(
              new Lease(
                  election,
                  candidate,
                  FencingToken.of(token),
                  reportedTtl.apply(lease.grantedSeconds),
                  Long.toString(lease.id))));
    } catch (LeaseStoreException e) {
      if (!EtcdErrors.isLeaseNotFound(e)) {
        // The transaction may still apply, or did: the lease may carry our key, so it must not
        // serve another election as the spare.
        leases.outcomeUnknown(lease.id);
        throw e;
      }
      // The spare or shared lease expired (its keys with it): grant a fresh one and start over.
      leases.lost(lease);
      return new Step(null, current, false);
    } finally {
      leases.unreserve(lease);
    }
  }

  /**
   * Takes a released key over together with the etcd lease it is on, with a keep-alive of that
   * lease sent at the same time: one round trip, no lease grant.
   */
  private Step takeOver(
      String election,
      String candidate,
      ByteSequence key,
      ByteSequence value,
      long seconds,
      KeyValue released,
      Cmp unchanged,
      long started,
      long deadline) {
    long leaseId = released.getLease();
    CompletableFuture<TxnResponse> written = commit(key, unchanged, value, leaseId);
    long sentAt = clock.nanoTime();
    CompletableFuture<LeaseKeepAliveResponse> alive =
        EtcdLease.sendKeepAlive(leaseClient, leaseId, callTimeoutNanos);
    TxnResponse response;
    try {
      response = calls.await(written, deadline, election, "writing the election key");
    } catch (LeaseStoreException e) {
      if (!EtcdErrors.isLeaseNotFound(e)) {
        // It may still apply, or did: a key of ours on that lease stays recognisable as ours.
        leases.outcomeUnknown(leaseId);
        throw e;
      }
      // The released lease ran out: its key is gone or going. Start again on a lease of our own.
      return new Step(null, released, true);
    }
    if (!response.isSucceeded()) {
      return changed(election, value, deadline, response);
    }
    long token = response.getHeader().getRevision();
    LeaseKeepAliveResponse kept;
    try {
      kept = calls.await(alive, deadline, election, "keeping the taken-over etcd lease alive");
    } catch (LeaseStoreException e) {
      if (!EtcdErrors.isLeaseNotFound(e)) {
        // The key is ours, but without a keep-alive its lease may end before our TTL: give it up.
        leases.outcomeUnknown(leaseId);
        deleteIfTerm(kv, key, token, value);
        throw e;
      }
      return new Step(null, null, true);
    }
    if (kept.getTTL() < seconds) {
      // Not the lease the marker promised (another store's bookkeeping went wrong): do not rely on
      // it.
      log.warn(
          "Election '{}': the released etcd lease {} has a TTL of {}s, not the {}s its marker named; acquiring on a lease of our own",
          election,
          Long.toHexString(leaseId),
          kept.getTTL(),
          seconds);
      leases.outcomeUnknown(leaseId);
      calls.await(
          deleteIfTerm(kv, key, token, value),
          deadline,
          election,
          "giving up the key on the wrong lease");
      return new Step(null, null, true);
    }
    EtcdLease lease = leases.adopt(leaseId, seconds, kept.getTTL(), sentAt);
    try {
      leases.granted(lease, election, token);
    } finally {
      leases.unreserve(lease);
    }
    return Step.done(
        Acquisition.granted(
            new Lease(
                election,
                candidate,
                FencingToken.of(token),
                reportedTtl.apply(lease.grantedSeconds),
                Long.toString(leaseId))));
  }

  /**
   * The transaction that writes the key on lease {@code leaseId} if it is unchanged, else reads it.
   */
  private CompletableFuture<TxnResponse> commit(
      ByteSequence key, Cmp unchanged, ByteSequence value, long leaseId) {
    PutOption onLease = PutOption.builder().withLeaseId(leaseId).build();
    return Calls.retryingAuth(
        () ->
            kv.txn()
                .If(unchanged)
                .Then(Op.put(key, value, onLease))
                .Else(Op.get(key, GetOption.DEFAULT))
                .commit());
  }

  /** The key was not as expected: held by another (the outcome), or where to try again from. */
  private Step changed(String election, ByteSequence value, long deadline, TxnResponse response) {
    Optional<KeyValue> now = firstKey(response);
    if (now.isPresent() && releasedHere(now.get(), value)) {
      // Read before a release of ours that has ended since: start again from what is there now.
      return new Step(null, null, false);
    }
    if (now.isPresent() && !ReleaseMarker.isMarker(now.get()) && !isOurs(now.get(), value)) {
      return Step.done(Acquisition.held(records.of(election, now.get(), deadline, false)));
    }
    return new Step(null, now.orElse(null), false);
  }

  private EtcdLease reserve(long seconds, long deadline, String election) {
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      EtcdLeases.Reservation reservation;
      try {
        // A spare being granted is worth one wait; should another acquisition take it first, the
        // next reservation grants a lease for this one alone.
        reservation = leases.reserve(seconds, attempt == 0);
      } catch (IllegalStateException e) {
        throw new LeaseStoreException(election, "the etcd lease store is closed", e);
      }
      if (reservation.lease() != null) {
        return reservation.lease();
      }
      try {
        EtcdLease granted =
            calls.await(
                reservation.grant(),
                deadline,
                election,
                "granting an etcd lease of " + seconds + "s");
        if (reservation.grantReserved()) {
          return granted;
        }
      } catch (LeaseStoreException e) {
        if (reservation.grantReserved()) {
          // Granted for us alone: should it still arrive, it is nobody's; hand it back.
          reservation.grant().thenAccept(leases::unreserve);
        }
        throw e;
      }
    }
    throw new LeaseStoreException(
        election, "could not obtain a live etcd lease of " + seconds + "s; try again");
  }

  /** The key as a watch last saw it: its value, or null when it was deleted. */
  private record Sighting(long revision, KeyValue kv) {}

  @Override
  public void seen(String election, long revision, KeyValue current) {
    sightings.merge(
        election,
        new Sighting(revision, current),
        (before, after) -> after.revision() >= before.revision() ? after : before);
  }

  @Override
  public void forget(String election) {
    sightings.remove(election);
  }

  /** Deletes the key only while it still shows this term: never somebody else's. */
  static CompletableFuture<TxnResponse> deleteIfTerm(
      KV kv, ByteSequence key, long token, ByteSequence value) {
    return Calls.retryingAuth(
        () ->
            kv.txn()
                .If(
                    new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(token)),
                    new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(value)))
                .Then(Op.delete(key, DeleteOption.DEFAULT))
                .commit());
  }

  /**
   * Deletes the election key if it holds {@code candidate}'s term on an etcd lease of this store
   * that no term of this store holds: the leftover of a write whose outcome was unknown, which
   * {@link #acquire} would take as its own. Its etcd lease is this store's, so the same id's term
   * in another process is never on it; the delete is guarded by the revision and value read, so a
   * grant in between wins.
   */
  void releaseUnanswered(String election, String candidate, long deadline) {
    if (!leases.anyUncertain()) {
      return; // every write was answered: no read, so a stop with the server down waits for none
    }
    ByteSequence key = keyOf.apply(election);
    ByteSequence value = ByteSequence.from(candidate, UTF_8);
    Optional<KeyValue> read =
        calls.await(
            Calls.retryingAuth(() -> keyReads.read(key)),
            deadline,
            election,
            "reading the election key");
    if (read.isEmpty() || !isOurs(read.get(), value) || heldHere(election, read.get(), value)) {
      return;
    }
    KeyValue leftover = read.get();
    calls.await(
        deleteIfTerm(kv, key, leftover.getModRevision(), value),
        deadline,
        election,
        "deleting the election key of a grant that got no answer");
    log.debug(
        "election '{}': {} gave back its grant at revision {} whose write got no answer",
        election,
        candidate,
        leftover.getModRevision());
  }

  /** The key holds {@code candidate}'s term on an etcd lease of this store. */
  private boolean isOurs(KeyValue current, ByteSequence candidate) {
    return current.getValue().equals(candidate) && leases.isOwn(current.getLease());
  }

  /** The key holds a term this store granted {@code candidate} and still keeps. */
  private boolean heldHere(String election, KeyValue current, ByteSequence candidate) {
    return current.getValue().equals(candidate)
        && leases.holds(current.getLease(), election, current.getModRevision());
  }

  /** Our key on a lease this store has since released it from, and dropped. */
  private boolean releasedHere(KeyValue current, ByteSequence candidate) {
    return current.getValue().equals(candidate)
        && !leases.isOwn(current.getLease())
        && leases.releasedFrom(current.getLease());
  }

  static Optional<KeyValue> firstKey(TxnResponse response) {
    if (response.getGetResponses().isEmpty()
        || response.getGetResponses().get(0).getKvs().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(response.getGetResponses().get(0).getKvs().get(0));
  }
}
