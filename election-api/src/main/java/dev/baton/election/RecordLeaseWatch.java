package dev.baton.election;

import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A leader's watch of its own record ({@link ObservedTimeLeaseStore#watchLease}). Every version the
 * record store delivers carries the holder and the transitions count, which is the token, so each
 * is judged as it comes, without a read: the leader's own renewals (same holder, same count) are no
 * loss; another holder, another count (a takeover, a release) or a deletion is. A broken watch is
 * no loss either: the record store watches again and first delivers the record as it is then, and
 * meanwhile the renewals tell as before.
 */
final class RecordLeaseWatch implements RecordStore.RecordWatcher, Subscription {

  private static final Logger log = LoggerFactory.getLogger(RecordLeaseWatch.class);

  private final String election;
  private final String candidate;
  private final long token;
  private final Runnable lost;
  private volatile boolean closed;
  private boolean told;
  private Subscription fromRecords;

  RecordLeaseWatch(Lease lease, Runnable lost) {
    this.election = lease.election();
    this.candidate = lease.candidate();
    this.token = lease.token().value();
    this.lost = lost;
  }

  @Override
  public void seen(Optional<VersionedRecord> record) {
    if (closed) {
      return;
    }
    boolean gone =
        record.isEmpty()
            || !record.get().record().holder().equals(candidate)
            || record.get().record().transitions() != token;
    if (!gone) {
      return;
    }
    synchronized (this) {
      if (told) {
        return;
      }
      told = true;
    }
    log.debug(
        "election '{}': the record of {}'s term {} was deleted or taken over",
        election,
        candidate,
        token);
    try {
      lost.run();
    } catch (RuntimeException e) {
      log.warn("election '{}': the lease loss callback threw", election, e);
    }
  }

  @Override
  public boolean watchesItsOwnLease() {
    return true;
  }

  @Override
  public void lost() {
    // The watch broke: changes may go unseen until it is back, which the renewals cover.
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

  @Override
  public void close() {
    Subscription s;
    synchronized (this) {
      closed = true;
      s = fromRecords;
      fromRecords = null;
    }
    if (s != null) {
      s.close();
    }
  }
}
