package dev.baton.election;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;

/**
 * Leading: holds a term, renews its lease every retry period (or the store's {@link
 * LeaseStore#renewalPeriod}), and ends the term (through {@link Campaign#endTerm}) when the store
 * says the lease is gone, when asked to, or when no renewal was confirmed within the renew
 * deadline, whichever comes first.
 *
 * <p>The deadline is checked first in every event of this phase, so a leader that was stalled (a GC
 * pause, a suspended VM) stops before it does anything else. Outcomes of renewals that arrive once
 * this phase has exited are late: a late success means the lease is ours again in the store, and it
 * is given back behind the ended term's callbacks, never before its work has stopped.
 */
final class Leading extends Phase {

  private final Campaign c;
  private final Term term;
  private final RenewalSchedule renewals;
  private Lease lease;
  private final Optional<Duration> withoutLeader;
  private final long renewEveryNanos;
  private final long renewSlackNanos;
  private DeadlineTimer deadline;
  // The store's watch of this term's lease, once it is live; opened when the term starts.
  private Subscription leaseWatch;

  Leading(Campaign c, Lease granted, long validUntilNanos, Optional<Duration> withoutLeader) {
    this.c = c;
    this.withoutLeader = withoutLeader;
    this.lease = granted;
    this.term =
        new Term(
            c.election, c.candidate, granted.token(), c.clock, c.callbackPool, validUntilNanos);
    this.renewals = c.renewalsFor(this);
    this.renewEveryNanos = c.renewalPeriodNanos(granted);
    this.renewSlackNanos = Campaign.renewSlack(renewEveryNanos);
  }

  @Override
  Kind kind() {
    return Kind.LEADING;
  }

  Term term() {
    return term;
  }

  Lease lease() {
    return lease;
  }

  /** How much earlier than due this term's renewals may go (see {@link Campaign#renewSlack}). */
  long renewSlackNanos() {
    return renewSlackNanos;
  }

  @Override
  void enter() {
    // Guarded: describe() and the format cost tens of microseconds on the way to onElected.
    if (Campaign.log.isInfoEnabled()) {
      Campaign.log.info(
          "{}: elected with fencing token {} on {} (lease {})",
          c.logId,
          term.token(),
          c.store.describe(),
          Durations.format(lease.ttl()));
    }
    c.publishTerm(term);
    c.emit(l -> l.onElected(term));
    c.learnLeader(Optional.of(c.candidate));
    c.observe(o -> o.termStarted(term, withoutLeader));
    c.watchLease(lease, this::leaseGone, this::leaseWatched);
    timed(
        () -> {
          if (!renewals.watchesDeadline()) {
            deadline = new DeadlineTimer(this, true);
          }
          renewals.renewAt(
              lease, term.validUntilNanos() - c.renewDeadline.toNanos() + renewEveryNanos);
        });
  }

  /**
   * Sets this term's timers. A scheduler that refuses one (shut down under a running elector) ends
   * the term at once: nothing else could end it at its renew deadline, and its work would run on
   * after the lease had run out.
   */
  private void timed(Runnable setTimers) {
    try {
      setTimers.run();
    } catch (RejectedExecutionException e) {
      timersRefused(e);
    }
  }

  void timersRefused(RejectedExecutionException e) {
    if (isActive()) {
      c.endTerm(
          this,
          StepDownReason.DEADLINE_PASSED,
          "the scheduler refused this term's timers ("
              + e.getMessage()
              + "), so nothing could end it at its renew deadline",
          Optional.empty());
    }
  }

  /** This term's lease watch, which its caller now closes; null when there is none (yet). */
  Subscription takeLeaseWatch() {
    Subscription w = leaseWatch;
    leaseWatch = null;
    return w;
  }

  private void leaseWatched(Optional<Subscription> sub) {
    if (!isActive()) {
      sub.ifPresent(c::closeWatch);
      return;
    }
    leaseWatch = sub.orElse(null);
  }

  /**
   * The store reports this term's lease gone or taken: the term ends exactly as after a renewal
   * that found it lost, without waiting for that renewal. Nothing is released: the lease is
   * somebody else's or nobody's. Were the report spurious, the lease simply runs out while this
   * elector follows, as after any lost renewal: a term ended early never makes a second leader.
   */
  private void leaseGone() {
    if (isActive() && !deadlinePassed()) {
      c.endTerm(
          this,
          StepDownReason.LEASE_LOST,
          "the store reports the lease gone or taken",
          Optional.empty());
    }
  }

  @Override
  void exit() {
    if (leaseWatch != null) {
      c.closeWatch(leaseWatch);
      leaseWatch = null;
    }
    renewals.cancel();
    if (deadline != null) {
      deadline.cancel();
      deadline = null;
    }
  }

  /** Ends the term when its renew deadline has passed; true when it did. */
  boolean deadlinePassed() {
    if (c.clock.nanoTime() - term.validUntilNanos() < 0) {
      return false;
    }
    c.endTerm(
        this,
        StepDownReason.DEADLINE_PASSED,
        "no renewal confirmed within the renew deadline",
        Optional.empty());
    return true;
  }

  void stepDown(StepDownReason why, String detail) {
    if (isActive() && !deadlinePassed()) {
      c.endTerm(this, why, detail, Optional.empty());
    }
  }

  void renewed(long startedNanos, Lease renewed) {
    if (!isActive()) {
      c.releaseAfterWork(renewed);
      return;
    }
    c.failures.recovered();
    // Kept before the deadline check: a release must carry the newest handle the store gave.
    // Stored only when it changed (most stores give the same Lease back): a store into this
    // long-lived object costs the collector a card to scan, for every renewal of every election.
    if (renewed != lease) {
      lease = renewed;
    }
    if (deadlinePassed()) {
      return;
    }
    long validUntil = startedNanos + c.renewDeadline.toNanos();
    if (validUntil - term.validUntilNanos() > 0) {
      term.extendTo(validUntil);
    }
    Campaign.log.debug("{}: renewed, token {}", c.logId, term.token());
    if (c.observed()) {
      // The renewal loop of thousands of elections: nothing is allocated for no observer.
      Duration latency = Duration.ofNanos(c.clock.nanoTime() - startedNanos);
      c.observe(o -> o.renewed(term, latency));
    }
    // As timed() does, without a lambda for every renewal of every election.
    try {
      renewals.renewAt(lease, startedNanos + renewEveryNanos);
    } catch (RejectedExecutionException e) {
      timersRefused(e);
    }
  }

  void renewFailed(RuntimeException ex) {
    if (!isActive() || deadlinePassed()) {
      return;
    }
    if (ex instanceof LeaseLostException) {
      c.endTerm(
          this,
          StepDownReason.LEASE_LOST,
          "lost leadership: " + ex.getMessage(),
          ((LeaseLostException) ex).holder());
      return;
    }
    c.observe(o -> o.renewalFailed(term, ex));
    c.failures.failed(
        "renewal failed; leading on until the renew deadline ("
            + Durations.format(term.remaining())
            + " left)",
        ex);
    timed(
        () -> {
          guardDeadline();
          long now = c.clock.nanoTime();
          renewals.renewAt(
              lease,
              now + Math.min(c.retryPeriod.toNanos(), Math.max(0, term.validUntilNanos() - now)));
        });
  }

  /** A renewal call is still out at a deadline of its batch. */
  void overdue() {
    if (isActive() && !deadlinePassed()) {
      timed(this::guardDeadline);
    }
  }

  /**
   * A leader whose renewals are in trouble times its own deadline, whatever watches its calls: the
   * one thing that must happen even when nothing else can is the step-down.
   */
  private void guardDeadline() {
    if (deadline == null) {
      deadline = new DeadlineTimer(this, false);
    }
  }

  void deadlineDue(DeadlineTimer timer) {
    if (isActive() && deadline == timer && !deadlinePassed()) {
      // The timer looked while a renewal was being applied here, just before the deadline moved.
      timed(timer::deadlineMoved);
    }
  }

  void timerRefused(DeadlineTimer timer, RejectedExecutionException e) {
    if (deadline == timer) {
      timersRefused(e);
    }
  }

  void deadlineTimerEnded(DeadlineTimer timer) {
    if (deadline == timer) {
      deadline = null;
    }
  }

  Campaign campaign() {
    return c;
  }
}
