package dev.baton.election;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;

/**
 * Following: campaigning for the lease. One acquire call in flight at a time (later requests
 * coalesce into one more); tries again when the watch reports a change, when the holder's lease
 * could first expire, or every retry period when there is no watch. A watch that reports expiry is
 * still checked by a look of its own every {@link #watchCheckPeriod}.
 *
 * <p>A follower that has just given a lease back (a step-down, a late grant) backs off first, and
 * ignores watch events until then: its own release must not call it straight back in ahead of the
 * others. The back-off belongs to this phase object, so a stop and a new start never inherit it.
 */
final class Following extends Phase {

  /**
   * How long a follower trusts a watch that reports expiry before it looks itself: two lease
   * durations, and at least 30 s, so that an idle follower still sends next to nothing.
   */
  static Duration watchCheckPeriod(Duration leaseDuration) {
    Duration twoLeases = leaseDuration.multipliedBy(2);
    return twoLeases.compareTo(LEAST_WATCH_CHECK_PERIOD) > 0 ? twoLeases : LEAST_WATCH_CHECK_PERIOD;
  }

  private static final Duration LEAST_WATCH_CHECK_PERIOD = Duration.ofSeconds(30);

  private final Campaign c;
  private final Duration backOffAtStart;
  private final boolean watchAtOnce;

  private boolean backingOff;
  // Set by afterWork(): no attempt until the ended term's work has stopped (workStopped()).
  private boolean awaitingWork;
  private long quietUntil;
  private boolean callInFlight;
  // An attempt failed without an answer and none was granted since: the store may have granted it.
  private boolean unanswered;
  private boolean attemptPending;
  private ScheduledFuture<?> nextAttempt;
  private Subscription watch;
  private boolean watching;
  private boolean subscribing;
  // For ElectorObserver.termStarted: since when this follower has known of no holder.
  private boolean sawHolder;
  private boolean leaderGone;
  private long leaderGoneAt;
  // The token of another candidate's lease under this elector's own id that was logged already.
  private FencingToken sameIdLogged;

  /**
   * @param backOff how long to wait before the first attempt; zero to try at once
   * @param watchAtOnce whether to watch from the start (after leading: someone else likely leads
   *     now); a fresh start watches only once an attempt shows another leads
   */
  Following(Campaign c, Duration backOff, boolean watchAtOnce) {
    this.c = c;
    this.backOffAtStart = backOff;
    this.watchAtOnce = watchAtOnce;
  }

  @Override
  Kind kind() {
    return Kind.FOLLOWING;
  }

  @Override
  void enter() {
    sawHolder = c.knownLeader().filter(l -> !l.equals(c.candidate)).isPresent();
    if (watchAtOnce) {
      watchAgain();
    }
    if (backOffAtStart.isZero()) {
      attempt();
    } else {
      backOff(backOffAtStart);
    }
  }

  @Override
  void exit() {
    Campaign.cancel(nextAttempt);
    nextAttempt = null;
    attemptPending = false;
    // A leader learns what it needs from its renewals, and a stopped elector needs nothing: drop
    // the watch, or each of our own renewals could come back as an event to ignore.
    if (watch != null) {
      c.closeWatch(watch);
    }
    watch = null;
    watching = false;
  }

  private boolean quiet() {
    return backingOff && c.clock.nanoTime() - quietUntil < 0;
  }

  private void onWatchEvent() {
    if (isActive() && !quiet()) {
      attempt();
    }
  }

  /**
   * Makes this follower wait, before its first attempt, until the term that just ended has stopped
   * its work ({@link #workStopped}). After a loss nobody else may hold the election (a lease
   * deleted behind its leader's back): without the wait, this elector could be granted a new term
   * while the old term's work, on a callbacks executor that is behind, still runs.
   */
  Following afterWork() {
    awaitingWork = true;
    return this;
  }

  /** The ended term's work has stopped: the attempts held back since the term ended may go. */
  void workStopped() {
    if (awaitingWork) {
      awaitingWork = false;
      if (attemptPending) {
        attempt();
      }
    }
  }

  private void attempt() {
    if (!isActive()) {
      return;
    }
    if (awaitingWork) {
      attemptPending = true;
      return;
    }
    if (callInFlight) {
      attemptPending = true;
      return;
    }
    Campaign.cancel(nextAttempt);
    nextAttempt = null;
    attemptPending = false;
    callInFlight = true;
    long t0 = c.clock.nanoTime();
    if (sawHolder && !leaderGone) {
      // An attempt after a refusal is made because the holder may be gone (a watch event, its
      // lease running out, a poll): from here this follower knows of no leader until told again.
      leaderGone = true;
      leaderGoneAt = t0;
    }
    c.call(
        () -> c.store.tryAcquire(c.election, c.candidate, c.leaseDuration),
        r -> acquired(t0, r),
        this::acquireFailed);
  }

  private void acquired(long t0, Acquisition result) {
    callInFlight = false;
    if (!isActive()) {
      // Stopped while the call was out. No term was started for this grant, but an earlier term's
      // work may still be stopping: the lease goes back behind it.
      if (result.isGranted()) {
        result.lease().ifPresent(c::releaseAfterWork);
      } else if (unanswered) {
        c.releaseUnansweredAfterWork();
      }
      return;
    }
    c.failures.recovered();
    if (result.isGranted()) {
      unanswered = false;
      Lease granted = result.lease().orElseThrow();
      c.lastGrantedToken = granted.token();
      long validUntil = t0 + c.renewDeadline.toNanos();
      if (c.clock.nanoTime() - validUntil >= 0) {
        // Confirmed so late that the renew deadline is already behind us: leading now could
        // outlast the lease. Give it back and try again.
        Campaign.log.warn(
            "{}: grant confirmed only after the renew deadline ({}); releasing it",
            c.logId,
            Durations.format(c.renewDeadline));
        refuse(granted);
        return;
      }
      if (granted.ttl().compareTo(c.renewDeadline) <= 0) {
        // The store applies a shorter lease than asked (a clamped session, say): a leader would
        // only step down at its renew deadline, after others could already be granted.
        Campaign.log.error(
            "{}: {} granted a lease of {}, not longer than the renew deadline ({}): leading on it could overlap the next leader; releasing it. Set election.renew-deadline below {}",
            c.logId,
            c.store.describe(),
            Durations.format(granted.ttl()),
            Durations.format(c.renewDeadline),
            Durations.format(granted.ttl()));
        refuse(granted);
        return;
      }
      Optional<Duration> withoutLeader =
          leaderGone
              ? Optional.of(Duration.ofNanos(c.clock.nanoTime() - leaderGoneAt))
              : Optional.empty();
      c.transition(new Leading(c, granted, validUntil, withoutLeader), null);
      return;
    }
    watchAgain();
    sawHolder = true;
    leaderGone = false;
    LeaseRecord holder = result.holder().orElseThrow();
    if (holder.holder().equals(c.candidate)) {
      refusedUnderOwnId(holder);
    }
    c.learnLeader(Optional.of(holder.holder()));
    scheduleAfterRefusal(holder.expiresIn());
    if (attemptPending && !quiet()) {
      attempt();
    }
  }

  /**
   * A refusal naming this elector's own id is never a reason to lead: a store never grants a live
   * lease again. Under its own last token it is this elector's lease whose release did not get
   * through, which runs out on its own. Under any other token, another live candidate uses the same
   * id, and both would lead if stores let them: said once per such lease, loudly, since only the
   * operator can fix it.
   */
  private void refusedUnderOwnId(LeaseRecord holder) {
    if (holder.token().equals(c.lastGrantedToken)) {
      Campaign.log.debug(
          "{}: its own lease with token {} is still live (its release did not get through); waiting for it to run out",
          c.logId,
          holder.token());
      return;
    }
    if (holder.token().equals(sameIdLogged)) {
      return;
    }
    sameIdLogged = holder.token();
    Campaign.log.error(
        "{}: another live candidate (another process, or another elector in this one) uses the same candidate id '{}' and holds the lease with token {} (or a process that used it ended without releasing); candidate ids must be unique. This elector waits as a follower until that lease ends",
        c.logId,
        c.candidate,
        holder.token());
  }

  private void refuse(Lease granted) {
    c.releaseAfterWork(granted);
    watchAgain();
    backOff(Campaign.jittered(c.retryPeriod));
  }

  private void acquireFailed(RuntimeException ex) {
    callInFlight = false;
    if (!isActive()) {
      // Stopped while the call was out, which may have been granted all the same.
      c.releaseUnansweredAfterWork();
      return;
    }
    unanswered = true;
    watchAgain();
    c.observe(o -> o.campaignFailed(ex));
    c.failures.failed("cannot reach the store to campaign", ex);
    scheduleAttempt(Campaign.jittered(c.retryPeriod));
  }

  /**
   * Whether a stop must give back a grant the store may have made without an answer: an attempt
   * failed, none was granted since, and none is out (its outcome sees to it when it comes).
   */
  boolean owesUnansweredRelease() {
    return unanswered && !callInFlight;
  }

  private void scheduleAfterRefusal(Optional<Duration> expiresIn) {
    if (watching && c.store.watchReportsExpiry()) {
      // The watch reports release and expiry alike, so there is nothing to poll for, unless the
      // watch died without a word (a stream left on a frozen server, a client's bug): this
      // follower would then believe in a leader long gone and never campaign again. A look now
      // and then costs a read and bounds how long that can last.
      scheduleAttempt(Campaign.jittered(watchCheckPeriod(c.leaseDuration)));
      return;
    }
    Duration spread =
        Campaign.spread(Duration.ofMillis(Math.min(50, c.retryPeriod.toMillis() / 10)));
    if (expiresIn.isPresent() && (watching || expiresIn.get().compareTo(c.retryPeriod) < 0)) {
      // Try right when the holder's lease could run out (releases arrive by watch); a small
      // spread keeps followers apart.
      scheduleAttempt(expiresIn.get().plus(spread));
    } else {
      scheduleAttempt(Campaign.jittered(c.retryPeriod));
    }
  }

  private void backOff(Duration pause) {
    backingOff = true;
    quietUntil = c.clock.nanoTime() + pause.toNanos();
    scheduleAttempt(pause);
  }

  private void scheduleAttempt(Duration delay) {
    Campaign.cancel(nextAttempt);
    try {
      nextAttempt = c.schedule(delay, this::attempt);
    } catch (RejectedExecutionException e) {
      nextAttempt = null;
      Campaign.log.error(
          "{}: the scheduler refused the next attempt ({}); only a watch event or a restart campaigns again",
          c.logId,
          e.getMessage());
    }
  }

  private void watchAgain() {
    if (watch == null && !subscribing) {
      subscribing = true;
      c.watch(this::onWatchEvent, this::subscribed);
    }
  }

  private void subscribed(Optional<Subscription> sub) {
    if (!isActive()) {
      sub.ifPresent(c::closeWatch);
      return;
    }
    subscribing = false;
    watching = sub.isPresent();
    watch = sub.orElse(null);
    if (watching && !callInFlight && !quiet()) {
      // A release between our last attempt and the watch going live would go unseen.
      attempt();
    }
  }
}
