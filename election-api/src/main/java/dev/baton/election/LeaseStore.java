package dev.baton.election;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A store of named, time-limited, exclusive leases: the one thing a backend implements.
 *
 * <p>Guarantees every implementation gives (the conformance suite checks each of them):
 *
 * <ol>
 *   <li><b>Exclusion.</b> If a {@link #tryAcquire} or {@link #renew} call that started at local
 *       monotonic time {@code t0} succeeds with effective TTL {@code ttl}, no other call is granted
 *       that election before {@code t0 + ttl}, not even one with the same candidate id (a candidate
 *       id names one live candidate: see {@link #tryAcquire}). The store enforces this with its own
 *       atomic primitive (one SQL statement, an etcd transaction, a ZooKeeper ephemeral create, a
 *       write guarded by a version), never by a read followed by a write in the client.
 *   <li><b>Time.</b> Expiry is judged by one clock all candidates share (the database's clock,
 *       etcd's lease, the ZooKeeper session) or, for stores that only offer compare-and-set, by
 *       each follower's own monotonic clock since it saw the record change ({@link
 *       ObservedTimeLeaseStore}). Never one machine's wall clock against another's.
 *   <li><b>Fencing.</b> Every granted {@code tryAcquire} begins a new term: its {@link
 *       FencingToken} is strictly greater than every token granted before for that election, also
 *       when the same candidate id held it last. {@code renew} keeps the token.
 *   <li><b>Errors.</b> "Somebody else holds it" is {@link Acquisition#held}, a normal answer. A
 *       renewal that finds the lease gone throws {@link LeaseLostException}. A store that cannot
 *       answer (connection, credentials, missing table, timeout) throws {@link LeaseStoreException}
 *       with the cause; it does not log and swallow.
 *   <li><b>Effective TTL.</b> A store that cannot honour the requested TTL exactly reports the TTL
 *       it really applies in the returned {@link Lease#ttl()}; it is never shorter than asked.
 *   <li><b>Timeouts.</b> Every call returns or throws within the store's configured call timeout,
 *       which is shorter than any renew deadline it is used with. No call blocks indefinitely.
 * </ol>
 *
 * <p>A store is safe for concurrent use by many electors and elections; they share its connection
 * or session. A store built from a client the caller supplied never closes that client.
 */
public interface LeaseStore extends AutoCloseable {

  /**
   * Grants {@code election} to {@code candidate} if it is free (never held, or released) or its
   * lease has expired; otherwise reports the current holder.
   *
   * <p>A live lease is never granted again, not even to its holder's id: a live lease held under
   * {@code candidate} itself is answered {@link Acquisition#held} naming that holder (the same id)
   * and its token, like any other. So one candidate id used by two live candidates (two processes
   * with a copied configuration, say) never makes two leaders: the second waits until the first's
   * lease ends. The one exception a store may make is a lease it can prove is its own dead
   * leftover, which no live elector can reach (a ZooKeeper node of a session this store has left).
   *
   * @param ttl the time-to-live asked for; the lease's {@link Lease#ttl()} is the one applied
   * @throws LeaseStoreException when the store could not answer
   */
  Acquisition tryAcquire(String election, String candidate, Duration ttl);

  /**
   * Extends {@code lease} by its TTL from the start of this call, keeping its fencing token.
   *
   * @return the renewed lease (its handle or effective TTL may change)
   * @throws LeaseLostException when the lease expired, was released or is held by another
   * @throws LeaseStoreException when the store could not answer
   */
  Lease renew(Lease lease);

  /**
   * Renews several leases of this store in one go: for each lease, in the order given, the outcome
   * {@link #renew} would have had, as if each renewal started when this call started. A lease that
   * is gone fails on its own ({@link LeaseLostException} in its {@link Renewal}); the others are
   * still renewed. When the store as a whole cannot answer, every lease fails with the same {@link
   * LeaseStoreException} (or this call throws it). The whole call returns within the call timeout.
   *
   * <p>Electors sharing a store hand it their renewals together when {@link #renewBatchLimit()} is
   * above 1, which is what lets one process lead thousands of elections cheaply. The default renews
   * one lease at a time.
   *
   * @param leases at most {@link #renewBatchLimit()} leases of this store, each at most once
   */
  default List<Renewal> renewAll(List<Lease> leases) {
    List<Renewal> outcomes = new ArrayList<>(leases.size());
    for (Lease lease : leases) {
      try {
        outcomes.add(Renewal.renewed(renew(lease)));
      } catch (RuntimeException e) {
        outcomes.add(Renewal.failed(e));
      }
    }
    return outcomes;
  }

  /**
   * The most leases one {@link #renewAll} call takes; 1 (the default) when the store has no cheaper
   * way to renew several than one by one, in which case electors call {@link #renew}.
   */
  default int renewBatchLimit() {
    return 1;
  }

  /**
   * Gives {@code lease} up so the next candidate can be granted at once. Does nothing when the
   * lease is no longer the caller's: a release never removes somebody else's lease.
   *
   * @throws LeaseStoreException when the store could not answer
   */
  void release(Lease lease);

  /**
   * Gives back a grant to {@code candidate} that this store may have made without the caller ever
   * hearing of it: a {@link #tryAcquire} that threw {@link LeaseStoreException} (a timeout, a lost
   * connection) after the server had applied its write. The elector calls this when it stops after
   * such a call, so that a graceful stop hands over in milliseconds, not after a lease nobody leads
   * under.
   *
   * <p>Releases only what the store can prove is that unanswered grant of its own, never a lease
   * another candidate holds, and never one another live candidate with the same id holds (two
   * processes with a copied configuration); does nothing when there is none. The default does
   * nothing: a store that cannot tell its own unanswered grant apart leaves it to run out (or to
   * end with the session it was made under, when the store is closed).
   *
   * @throws LeaseStoreException when the store could not answer
   */
  default void releaseUnanswered(String election, String candidate) {}

  /**
   * The current holder as the store sees it; empty when nobody holds a live lease.
   *
   * @throws LeaseStoreException when the store could not answer
   */
  Optional<LeaseRecord> read(String election);

  /**
   * Asks to be told when the election's record changes, so that followers can try at once instead
   * of polling. {@code changed} runs on a thread of the store's, must not block, and may be called
   * spuriously (also when the watch itself broke and was re-established, since events may have been
   * missed). Empty when this store cannot watch.
   *
   * <p>No change after {@code watch} returns may go unreported. A store whose watch only goes live
   * later (its server confirms it asynchronously) calls {@code changed} once when it does, so that
   * the follower looks again and a change in between is not lost.
   */
  default Optional<Subscription> watch(String election, Runnable changed) {
    return Optional.empty();
  }

  /**
   * {@link #watch} for a candidate that waits its turn: the elector's followers call this one. A
   * store that can keep waiting candidates in line (ZooKeeper) keeps {@code candidate}'s place
   * while the subscription is open, so that a release hands the lease to the first in line without
   * a write of its own: its next {@link #tryAcquire} is granted on a read. Closing the subscription
   * gives a place that was not granted back; a granted one is a lease and ends as leases do. The
   * default keeps no place and only watches.
   */
  default Optional<Subscription> follow(String election, String candidate, Runnable changed) {
    return watch(election, changed);
  }

  /**
   * Asks to be told at once when {@code lease} is gone or taken, so that its leader can end its
   * term within one watch delivery instead of at its next renewal. The elector calls this when a
   * term starts and closes the subscription when the term ends, for whatever reason (a lost
   * renewal, a step-down, a release, close): the subscription lives exactly as long as the term.
   * Empty (the default) when this store cannot watch: its leaders learn at their next renewal, as
   * ever.
   *
   * <p>{@code lost} runs on a thread of the store's and must not block; it may run more than once.
   * The store calls it only when it knows the lease is gone or taken: its key or record deleted, or
   * a different holder or a newer term (token) written. Never for the leader's own renewals, and
   * never merely because the watch broke: a broken watch leaves the leader where it was before,
   * with its renewals to tell it.
   *
   * <p>What an implementation must get right:
   *
   * <ul>
   *   <li><b>No extra round trips for renewals.</b> Where a renewal writes the record the watch
   *       reports (Kubernetes, PostgreSQL), the store decides from what the event carries (the
   *       holder and token in it), or reads only when the event can mean a loss; a leader that
   *       renews costs the store nothing more than before.
   *   <li><b>A spurious call is safe.</b> Ending a term early never makes a second leader: the
   *       elector ends the term exactly as after a renewal that found the lease lost (work stopped,
   *       {@code onRevoked}, then it campaigns again as followers do, releasing nothing), and a
   *       lease that was still its own only runs out meanwhile. So a store calls {@code lost} only
   *       for what it knows, but when in doubt it may: the price is availability, never exclusion.
   *   <li><b>No thread per election.</b> Calls come from the store's existing watch machinery (its
   *       watch stream, its session's event thread, its listener connection) or the shared
   *       scheduler, never from a thread started for one lease.
   * </ul>
   *
   * <p>Only a lease obtained from this store is passed; its handle may change with renewals, so the
   * store identifies the lease by election, candidate and token.
   */
  default Optional<Subscription> watchLease(Lease lease, Runnable lost) {
    return Optional.empty();
  }

  /**
   * Whether {@link #watch} also reports expiry of a holder that stopped renewing (etcd, ZooKeeper),
   * not only releases and takeovers. When it does, followers do not poll; they only look once every
   * two lease durations (at least 30 s), in case the watch died without a word.
   */
  default boolean watchReportsExpiry() {
    return false;
  }

  /**
   * How long a leader holding {@code lease} waits between renewals while they succeed, where the
   * store knows better than the retry period: a store whose connection sends a keep-alive of its
   * own at a fixed period anyway (ZooKeeper's session pings) asks for renewals just before each
   * keep-alive is due, so that the renewal goes instead of the keep-alive, not on top of it. Empty
   * (the default): every retry period.
   *
   * <p>The elector takes it only where it leaves at least two renewals within the renew deadline,
   * and after a failed renewal tries again every retry period, so the renew deadline and the lease
   * contract are as strict as ever. Called once per term.
   */
  default Optional<Duration> renewalPeriod(Lease lease) {
    return Optional.empty();
  }

  /**
   * Refuses an election name this store cannot keep (too long, characters its keys or paths do not
   * allow) with a {@link ConfigurationException} that names the value and what is accepted. Called
   * when an {@link Elector} is built, so a bad name fails at start, not at the first call.
   */
  default void checkElectionName(String election) {}

  /**
   * Refuses a lease duration this store cannot grant (Azure Blob leases last 15 to 60 s) with a
   * {@link ConfigurationException} that names {@code leaseDuration}, the value and what is
   * accepted. Called when an {@link Elector} is built, so a duration the store would refuse fails
   * at start. Stores that round a TTL up (whole seconds, a server's minimum) accept any and report
   * the TTL they apply in {@link Lease#ttl()}.
   */
  default void checkLeaseDuration(Duration leaseDuration) {}

  /** A short name of the backend for logs and status, such as {@code jdbc (PostgreSQL)}. */
  String describe();

  /** Releases what the store created itself; never closes a client the caller supplied. */
  @Override
  void close();
}
