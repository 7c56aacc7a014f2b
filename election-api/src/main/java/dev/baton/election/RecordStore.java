package dev.baton.election;

import java.util.Optional;

/**
 * The smaller contract for stores that only offer compare-and-set on a versioned record
 * (Kubernetes Leases, DynamoDB conditional writes, blob ETags). {@link ObservedTimeLeaseStore}
 * turns one into a {@link LeaseStore}, judging expiry by each follower's own monotonic clock as
 * client-go does; the record store itself knows nothing of time.
 *
 * <p>Every method returns or throws within the store's call timeout. A version conflict is a
 * normal answer (an empty result), not an exception; a store that cannot answer throws {@link
 * LeaseStoreException}.
 */
public interface RecordStore extends AutoCloseable {

  /** The record as stored now, or empty when there is none. */
  Optional<VersionedRecord> read(String election);

  /** Creates the record if there is none; empty when one exists already. */
  Optional<VersionedRecord> create(String election, ElectionRecord record);

  /**
   * Replaces the record only if its version is still {@code expectedVersion}; empty when it
   * changed or was deleted in the meantime. Never an unconditional overwrite.
   */
  Optional<VersionedRecord> replace(String election, String expectedVersion, ElectionRecord record);

  /** Like {@link LeaseStore#watch}: tells when the record changes; empty when it cannot watch. */
  default Optional<Subscription> watch(String election, Runnable changed) {
    return Optional.empty();
  }

  /** As {@link LeaseStore#checkElectionName}: refuses a name this store cannot keep. */
  default void checkElectionName(String election) {}

  /** A short name of the backend for logs and status. */
  String describe();

  @Override
  void close();
}
