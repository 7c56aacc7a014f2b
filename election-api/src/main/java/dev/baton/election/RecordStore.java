package dev.baton.election;

import java.util.Optional;

/**
 * The smaller contract for stores that only offer compare-and-set on a versioned record (Kubernetes
 * Leases, DynamoDB conditional writes, blob ETags). {@link ObservedTimeLeaseStore} turns one into a
 * {@link LeaseStore}, judging expiry by each follower's own monotonic clock as client-go does; the
 * record store itself knows nothing of time.
 *
 * <p>Every method returns or throws within the store's call timeout. A version conflict is a normal
 * answer (an empty result), not an exception; a store that cannot answer throws {@link
 * LeaseStoreException}.
 */
public interface RecordStore extends AutoCloseable {

  /** The record as stored now, or empty when there is none. */
  Optional<VersionedRecord> read(String election);

  /** Creates the record if there is none; empty when one exists already. */
  Optional<VersionedRecord> create(String election, ElectionRecord record);

  /**
   * Replaces the record only if its version is still {@code expectedVersion}; empty when it changed
   * or was deleted in the meantime. Never an unconditional overwrite.
   */
  Optional<VersionedRecord> replace(String election, String expectedVersion, ElectionRecord record);

  /**
   * Hands {@code watcher} every version of the record the store reports, in the store's order, so
   * that followers can track renewals without reading; empty when this store cannot watch. A new
   * watch first reports the record as it is, if there is one (Kubernetes sends it as ADDED).
   */
  default Optional<Subscription> watch(String election, RecordWatcher watcher) {
    return Optional.empty();
  }

  /**
   * What a {@link RecordStore#watch} reports, on a thread of the store's; neither call may block.
   */
  interface RecordWatcher {

    /** The record as it is now: created or changed (present), or deleted (empty). */
    void seen(Optional<VersionedRecord> record);

    /**
     * The watch broke (or could not be opened). Changes may go unreported until the next {@link
     * #seen}, which follows once the store has watched again; until then, read to be sure.
     */
    void lost();

    /**
     * True for a leader's watch of its own record ({@link ObservedTimeLeaseStore#watchLease}). A
     * store whose watch starts at the server's present (a Kubernetes watch) never names a record
     * deleted before the watch began; for such a watcher it reads the record once, so that the
     * leader hears of the deletion, not only its next renewal.
     */
    default boolean watchesItsOwnLease() {
      return false;
    }
  }

  /** As {@link LeaseStore#checkElectionName}: refuses a name this store cannot keep. */
  default void checkElectionName(String election) {}

  /** A short name of the backend for logs and status. */
  String describe();

  @Override
  void close();
}
