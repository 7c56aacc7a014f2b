package dev.baton.election;

/** Why a term ended, as {@link ElectorObserver#termEnded} tells it. */
public enum StepDownReason {
  /** No renewal was confirmed within the renew deadline; the lease may still have been ours. */
  DEADLINE_PASSED,
  /** The store said the lease is no longer ours (expired, released, or held by another). */
  LEASE_LOST,
  /** {@link Elector#stepDown()} was called. */
  STEPPED_DOWN,
  /** The term's work failed to start, so the term was given up. */
  WORK_FAILED,
  /** {@link Elector#close()} was called (or the JVM shut down and closed it). */
  CLOSED
}
