package dev.baton.election;

import java.time.Duration;
import java.util.Optional;

/**
 * Told what an elector does, for metrics: terms started and ended, renewals and their latency,
 * failed store calls. Calls come on the elector's own path, one at a time, so an observer must
 * return at once (count, record a timer) and never block or call back into the elector; one that
 * throws is logged and the elector carries on. Whether this candidate leads now, and how long ago
 * its last renewal was confirmed, are on {@link Elector#isLeader()} and {@link Term#remaining()}.
 */
public interface ElectorObserver {

  /**
   * The store granted this candidate a new term.
   *
   * @param withoutLeader how long this candidate had known of no leader when it was granted: from
   *     the moment it learned the previous holder had gone (a watch event, or the holder's lease
   *     running out) to the grant; empty when it had known of no holder before (the first leader)
   */
  default void termStarted(Term term, Optional<Duration> withoutLeader) {}

  /** The term ended; its work is being stopped. */
  default void termEnded(Term term, StepDownReason reason) {}

  /** A renewal was confirmed, {@code latency} after the call began. */
  default void renewed(Term term, Duration latency) {}

  /**
   * A renewal failed without the store saying the lease is gone; the term goes on until its
   * deadline.
   */
  default void renewalFailed(Term term, RuntimeException cause) {}

  /** A follower's attempt to acquire failed (the store could not answer). */
  default void campaignFailed(RuntimeException cause) {}
}
