package dev.baton.election;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state machine behind an {@link Elector}: the current {@link Phase}, the one method that moves
 * between phases ({@link #transition}, checked against {@link Phase#MOVES}), and the one routine by
 * which every term ends ({@link #endTerm}), so that "end the term, stop its work, then release" is
 * written once. What the phases share (store calls, the watch, callbacks, timers) lives here.
 *
 * <p>Everything but the volatile fields read by {@link Elector}'s queries runs on {@link #engine},
 * one task at a time.
 *
 * <p>Two pools, kept apart so that a store call that hangs never queues ahead of a step-down or of
 * the stopping of work: the engine and every store call run on {@link #ownPool}, Baton's elastic
 * pool, which grows with the calls in flight and queues nothing; the callbacks (user code) run on
 * {@link #callbackPool}, the executor the user chose, and on {@code ownPool} when that refuses.
 */
final class Campaign {

  // Logged under the Elector's name: that is the class users configure their logging for.
  static final Logger log = LoggerFactory.getLogger(Elector.class);

  final LeaseStore store;
  final String election;
  final String candidate;
  final Duration leaseDuration;
  final Duration renewDeadline;
  final Duration retryPeriod;
  final MonotonicClock clock;
  final ScheduledExecutorService scheduler;
  final Executor ownPool;
  final Executor callbackPool;
  final SerialExecutor engine;
  final SerialExecutor callbacks;
  // The default: callbacks may then go on with the thread of a store call that has returned.
  private final boolean callbacksShareOwnPool;
  final String logId;
  final FailureStreak failures;
  final boolean closeOnShutdown;
  private final RenewalBatcher batcher;
  private final List<ElectionListener> listeners;
  private final List<ElectorObserver> observers;

  // Confined to the engine executor.
  private Phase phase = new Phase.Stopped();
  // The token of this elector's last grant (Following's): a refusal naming it is its own lease.
  FencingToken lastGrantedToken;
  private boolean restartAfterStop;
  private final List<CompletableFuture<Void>> stopWaiters = new ArrayList<>();

  // Store calls, releases and watch changes started and not yet finished (any thread). A stop
  // completes only when none is left, so nothing of a closed elector reaches the store after
  // close() returns, where it could end the term of a successor with the same candidate id.
  private final AtomicInteger storeOps = new AtomicInteger();

  // Published for readers on other threads.
  private volatile Phase.Kind published = Phase.Kind.STOPPED;
  private volatile Term publishedTerm;
  private volatile Optional<String> knownLeader = Optional.empty();

  Campaign(ElectorBuilder b) {
    this.store = b.store;
    this.election = b.election;
    this.candidate = b.candidate;
    this.leaseDuration = b.leaseDuration;
    this.renewDeadline = b.renewDeadline;
    this.retryPeriod = b.retryPeriod;
    this.clock = b.clock;
    this.scheduler = b.scheduler;
    this.ownPool = b.ownPool;
    this.callbackPool = b.worker;
    this.engine = new SerialExecutor(ownPool);
    this.callbacks = new SerialExecutor(callbackPool, ownPool);
    this.callbacksShareOwnPool = callbackPool == ownPool;
    this.listeners = List.copyOf(b.listeners);
    this.observers = List.copyOf(b.observers);
    this.closeOnShutdown = b.closeOnShutdown;
    this.logId = "election '" + election + "' candidate '" + candidate + "'";
    this.failures = new FailureStreak(log, logId, store.describe());
    this.batcher =
        store.renewBatchLimit() > 1 ? RenewalBatcher.of(store, scheduler, ownPool, clock) : null;
  }

  // ---------------------------------------------------------------- requests (engine)

  void start() {
    if (phase.kind() == Phase.Kind.STOPPING) {
      restartAfterStop = true;
      return;
    }
    if (phase.kind() != Phase.Kind.STOPPED) {
      return;
    }
    failures.reset();
    log.debug("{}: campaigning on {}", logId, store.describe());
    // No watch yet: most starts on a free election lead at once, and a watch set up beside the
    // first attempt would compete with it for the connection and then be closed unused.
    transition(new Following(this, Duration.ZERO, false), null);
  }

  void stop(CompletableFuture<Void> done) {
    if (phase.kind() == Phase.Kind.STOPPED) {
      done.complete(null);
      return;
    }
    restartAfterStop = false;
    stopWaiters.add(done);
    if (phase instanceof Leading) {
      endTerm((Leading) phase, StepDownReason.CLOSED, "closing", Optional.empty());
    } else if (phase instanceof Following following) {
      // A stop right after an attempt that got no answer: the store may have granted it, and
      // nobody else could lead until that lease ran out.
      transition(
          new Stopping(this),
          following.owesUnansweredRelease() ? this::releaseUnansweredAfterWork : null);
    }
  }

  void stepDown() {
    if (phase instanceof Leading) {
      ((Leading) phase).stepDown(StepDownReason.STEPPED_DOWN, "stepping down");
    }
  }

  void workFailed(Term term) {
    if (phase instanceof Leading && ((Leading) phase).term() == term) {
      ((Leading) phase)
          .stepDown(StepDownReason.WORK_FAILED, "leader work failed; giving the term up");
    }
  }

  // ---------------------------------------------------------------- the machine (engine)

  /**
   * Moves to {@code next}: checks the move is legal, runs the current phase's exit (its timers,
   * watch and pending renewal are cancelled), runs {@code onTheWay}, then enters {@code next}.
   */
  void transition(Phase next, Runnable onTheWay) {
    Phase from = phase;
    if (!Phase.legal(from.kind(), next.kind())) {
      throw new IllegalStateException(
          logId + ": no move from " + from.kind() + " to " + next.kind());
    }
    from.exited();
    phase = next;
    published = next.kind();
    if (onTheWay != null) {
      onTheWay.run();
    }
    next.entered();
  }

  /**
   * Ends the term {@code leading} holds, for any reason. The term is invalid at once; its {@code
   * onEnd} actions, {@code ended()} dependents and {@code onRevoked} run next on the callbacks
   * executor; and a release, when the reason calls for one, is queued behind them, so the next
   * leader can only come once this term's work has stopped.
   */
  void endTerm(Leading leading, StepDownReason why, String detail, Optional<String> nextLeader) {
    boolean release = why != StepDownReason.LEASE_LOST;
    Term t = leading.term();
    // Taken before the phase exits, which would close it at once: see releaseAfterWork.
    Subscription leaseWatch = release ? leading.takeLeaseWatch() : null;
    if (why == StepDownReason.DEADLINE_PASSED) {
      log.error(
          "{}: {} ({}); stepping down with token {}",
          logId,
          detail,
          Durations.format(renewDeadline),
          t.token());
    } else {
      log.info("{}: {}; ending the term with token {}", logId, detail, t.token());
    }
    Phase next;
    // What follows differs only by the reason: a lost lease has nothing to release and campaigns
    // again at once; a passed deadline releases (the lease may still be ours) and retries soon.
    switch (why) {
      case CLOSED:
        next = new Stopping(this);
        break;
      case LEASE_LOST:
        // At once, but only once the term's work has stopped: see Following.afterWork.
        next = new Following(this, Duration.ZERO, true).afterWork();
        break;
      case DEADLINE_PASSED:
        next = new Following(this, jittered(retryPeriod), true);
        break;
      default:
        // The pause gives the others the first chance at the lease we give back.
        next = new Following(this, retryPeriod.multipliedBy(2), true);
    }
    Phase entered = next;
    transition(
        next,
        () -> {
          publishedTerm = null;
          t.markEnded();
          callbacks.execute(t::signalEnded);
          emit(l -> l.onRevoked(t));
          observe(o -> o.termEnded(t, why));
          if (release) {
            releaseAfterWork(leading.lease(), leaseWatch);
          } else if (entered instanceof Following following) {
            // Queued behind onRevoked and the work's stop, as a release is.
            callbacks.execute(() -> engine.execute(following::workStopped));
          }
          learnLeader(nextLeader);
        });
  }

  void stopped() {
    transition(new Phase.Stopped(), null);
    learnLeader(Optional.empty());
    List<CompletableFuture<Void>> waiters = new ArrayList<>(stopWaiters);
    stopWaiters.clear();
    waiters.forEach(w -> w.complete(null));
    if (restartAfterStop) {
      restartAfterStop = false;
      start();
    }
  }

  /**
   * The store's renewal period for this lease where it leaves at least two renewals within the
   * renew deadline; the retry period otherwise.
   */
  long renewalPeriodNanos(Lease lease) {
    Optional<Duration> asked = store.renewalPeriod(lease);
    long period = asked.isPresent() ? asked.get().toNanos() : 0;
    return period > 0 && period <= renewDeadline.toNanos() / 2 ? period : retryPeriod.toNanos();
  }

  RenewalSchedule renewalsFor(Leading leading) {
    return batcher == null
        ? new RenewalSchedule.Direct(this, leading)
        : new RenewalSchedule.Batched(this, leading, batcher);
  }

  // ---------------------------------------------------------------- what readers see (any thread)

  void publishTerm(Term t) {
    publishedTerm = t;
  }

  Term publishedTerm() {
    return publishedTerm;
  }

  Phase.Kind published() {
    return published;
  }

  Optional<String> knownLeader() {
    return knownLeader;
  }

  void learnLeader(Optional<String> leader) {
    if (!leader.equals(knownLeader)) {
      knownLeader = leader;
      emit(l -> l.onLeaderChanged(leader));
    }
  }

  void emit(Consumer<ElectionListener> event) {
    callbacks.execute(
        () -> {
          for (ElectionListener l : listeners) {
            try {
              event.accept(l);
            } catch (WorkFailedException e) {
              engine.execute(() -> workFailed(e.term));
            } catch (Throwable e) {
              // An Error too: a listener's bug must not cost the others their callbacks.
              log.warn("{}: a listener threw; the others still run", logId, e);
            }
          }
        });
  }

  boolean observed() {
    return !observers.isEmpty();
  }

  /** Tells the observers, on the engine; one that throws costs nothing but a log line. */
  void observe(Consumer<ElectorObserver> event) {
    for (ElectorObserver o : observers) {
      try {
        event.accept(o);
      } catch (Throwable e) {
        log.warn("{}: an observer threw; the elector carries on", logId, e);
      }
    }
  }

  // ---------------------------------------------------------------- store calls

  interface StoreCall<T> {
    T run();
  }

  /**
   * Runs a blocking store call on our own pool and hands its outcome back to the engine. When the
   * pool refuses the call, that is its outcome: a failure, handled like any other.
   */
  <T> void call(StoreCall<T> body, Consumer<T> onResult, Consumer<RuntimeException> onError) {
    storeOpStarted();
    Runnable task =
        () -> {
          T result;
          try {
            result = body.run();
          } catch (RuntimeException e) {
            engine.runOrExecute(() -> handOver(() -> onError.accept(e)));
            return;
          } catch (Error e) {
            engine.execute(
                () ->
                    handOver(
                        () ->
                            onError.accept(
                                new LeaseStoreException(election, "store call failed", e))));
            throw e;
          }
          // This pool thread is free now: carry on here with the outcome, and with the callbacks
          // it brings (a grant's onElected) when they would run on this pool anyway, rather than
          // wake another thread for each.
          boolean holding = callbacksShareOwnPool && callbacks.hold();
          try {
            engine.runOrExecute(() -> handOver(() -> onResult.accept(result)));
          } finally {
            callbacks.runHeld(holding);
          }
        };
    try {
      ownPool.execute(task);
    } catch (RejectedExecutionException | OutOfMemoryError refused) {
      engine.execute(
          () ->
              handOver(
                  () ->
                      onError.accept(
                          new LeaseStoreException(
                              election, "the executor refused the store call", refused))));
    }
  }

  /**
   * Runs a call's outcome on the engine, then counts the call finished (after any release it
   * started).
   */
  void handOver(Runnable outcome) {
    try {
      outcome.run();
    } finally {
      storeOpEnded();
    }
  }

  /**
   * Releases behind every callback queued so far, so after the onRevoked of any term that has
   * ended. Every release goes this way, a grant that never became a term (answered after close(),
   * or refused) included: while an earlier term's work is still stopping, the lease in the store is
   * what keeps the next leader out. The release itself runs on our own pool: a store that hangs
   * must not hold up the callbacks queued behind it, another elector's onRevoked among them.
   */
  void releaseAfterWork(Lease l) {
    releaseAfterWork(l, null);
  }

  /**
   * {@link #releaseAfterWork(Lease)}, then closes {@code leaseWatch}, the ended term's watch of its
   * lease, whose reports are ignored from the term's end on. Closed only after the release, so that
   * the store never tears that watch down while it delivers the release's own change to it: the
   * fabric8 mock API server fails the release's PUT when a watch of the Lease closes meanwhile.
   */
  void releaseAfterWork(Lease l, Subscription leaseWatch) {
    storeOpStarted();
    if (leaseWatch == null) {
      callbacks.execute(() -> onOwnPool(() -> release(l)));
      return;
    }
    storeOpStarted();
    callbacks.execute(
        () ->
            onOwnPool(
                () -> {
                  try {
                    release(l);
                  } finally {
                    closeNow(leaseWatch);
                  }
                }));
  }

  /**
   * Gives back a grant the store may have made without an answer ({@link
   * LeaseStore#releaseUnanswered}), behind the callbacks queued so far as every release is: while
   * an earlier term's work is still stopping, that lease keeps the next leader out.
   */
  void releaseUnansweredAfterWork() {
    storeOpStarted();
    callbacks.execute(
        () ->
            onOwnPool(
                () -> {
                  try {
                    store.releaseUnanswered(election, candidate);
                  } catch (RuntimeException e) {
                    log.warn(
                        "{}: could not give back a grant that got no answer; if it was granted, it will expire on its own: {}",
                        logId,
                        FailureStreak.causes(e));
                  } finally {
                    storeOpEnded();
                  }
                }));
  }

  private void closeNow(Subscription w) {
    try {
      w.close();
    } catch (RuntimeException ex) {
      log.warn("{}: closing the watch failed", logId, ex);
    } finally {
      storeOpEnded();
    }
  }

  /** Runs {@code task} on our own pool; here, when the pool refuses it. */
  private void onOwnPool(Runnable task) {
    // A hand-off even when the callbacks run on that pool: run here, a release that hangs would
    // hold up this elector's next callbacks, the onRevoked of a term that ends meanwhile among
    // them.
    try {
      ownPool.execute(task);
    } catch (RejectedExecutionException | OutOfMemoryError refused) {
      task.run();
    }
  }

  private void release(Lease l) {
    try {
      store.release(l);
    } catch (RuntimeException e) {
      log.warn(
          "{}: could not release the lease with token {}; it will expire on its own: {}",
          logId,
          l.token(),
          FailureStreak.causes(e));
    } finally {
      storeOpEnded();
    }
  }

  /**
   * Watches the election; {@code whenLive} gets the subscription, or empty when polling must do.
   */
  void watch(Runnable onEvent, Consumer<Optional<Subscription>> whenLive) {
    // The store's thread only starts a call here (an attempt never blocks), so the event need not
    // wait for a pool thread to be handed over.
    subscribe(
        () -> store.follow(election, candidate, () -> engine.runOrExecute(onEvent)),
        "cannot watch the election on {}; polling instead",
        whenLive,
        false);
  }

  /**
   * Watches a leader's own lease ({@link LeaseStore#watchLease}); {@code whenLive} gets the
   * subscription, or empty when the leader learns of a loss at its renewals only.
   */
  void watchLease(Lease lease, Runnable onLost, Consumer<Optional<Subscription>> whenLive) {
    // Handed to the engine as a task of its own, never run on the store's thread: ending a term
    // queues callbacks and a release, which must not run inside the store's watch machinery.
    subscribe(
        () -> store.watchLease(lease, () -> engine.execute(onLost)),
        "cannot watch its own lease on {}; it learns of a loss at its next renewal",
        whenLive,
        true);
  }

  /**
   * @param afterHeld on a grant, open it on the thread about to deliver the onElected, right after
   *     it, rather than wake a second thread that would compete with it for a core
   */
  private void subscribe(
      StoreCall<Optional<Subscription>> open,
      String failure,
      Consumer<Optional<Subscription>> whenLive,
      boolean afterHeld) {
    storeOpStarted();
    Runnable task =
        () -> {
          Optional<Subscription> sub = Optional.empty();
          Error bug = null;
          try {
            sub = open.run();
          } catch (RuntimeException | Error ex) {
            // An Error too: the call must still be counted finished, or no stop could complete.
            log.warn("{}: " + failure, logId, store.describe(), ex);
            bug = ex instanceof Error ? (Error) ex : null;
          }
          Optional<Subscription> result = sub;
          engine.execute(() -> handOver(() -> whenLive.accept(result)));
          if (bug != null) {
            throw bug;
          }
        };
    if (afterHeld && callbacks.runAfterHeld(task)) {
      return;
    }
    try {
      ownPool.execute(task);
    } catch (RejectedExecutionException | OutOfMemoryError refused) {
      engine.execute(() -> handOver(() -> whenLive.accept(Optional.empty())));
    }
  }

  void closeWatch(Subscription w) {
    storeOpStarted();
    Runnable task =
        () -> {
          try {
            w.close();
          } catch (RuntimeException ex) {
            log.warn("{}: closing the watch failed", logId, ex);
          } finally {
            storeOpEnded();
          }
        };
    // A grant, on the pool thread that is about to deliver its onElected: waking a second thread to
    // close the follower's watch cost that onElected about 40 us. This thread closes it after the
    // onElected; the watch's events meanwhile reach a phase that has ended and are ignored.
    if (callbacks.runAfterHeld(task)) {
      return;
    }
    try {
      ownPool.execute(task);
    } catch (RejectedExecutionException | OutOfMemoryError refused) {
      task.run();
    }
  }

  void storeOpStarted() {
    storeOps.incrementAndGet();
  }

  void storeOpEnded() {
    if (storeOps.decrementAndGet() == 0 && published == Phase.Kind.STOPPING) {
      engine.execute(
          () -> {
            if (phase instanceof Stopping) {
              ((Stopping) phase).finishIfIdle();
            }
          });
    }
  }

  boolean storeIdle() {
    return storeOps.get() == 0;
  }

  // ---------------------------------------------------------------- time

  /** Timers only hand their action to the engine: the shared timer thread never runs our code. */
  ScheduledFuture<?> schedule(Duration delay, Runnable action) {
    return scheduler.schedule(() -> engine.execute(action), delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * How much earlier than due a renewal or a deadline timer may go, so that those due close
   * together share a call or a wake-up.
   */
  long renewSlack() {
    return renewSlack(retryPeriod.toNanos());
  }

  /**
   * The slack of renewals every {@code periodNanos}: the period cut into whole slots of at most an
   * eighth of it and at most 100 ms. A renewal sent at a slot's start is then due again exactly at
   * a later slot's start, so renewals go out a whole period apart, not up to a slot less.
   */
  static long renewSlack(long periodNanos) {
    long slots = Math.max(8, -Math.floorDiv(-periodNanos, TimeUnit.MILLISECONDS.toNanos(100)));
    return periodNanos / slots;
  }

  static void cancel(ScheduledFuture<?> timer) {
    if (timer != null) {
      timer.cancel(false);
    }
  }

  static Duration jittered(Duration base) {
    double factor = 1 + ThreadLocalRandom.current().nextDouble() * (Elector.JITTER - 1);
    return Duration.ofNanos((long) (base.toNanos() * factor));
  }

  static Duration spread(Duration max) {
    if (max.isZero()) {
      return Duration.ZERO;
    }
    return Duration.ofNanos(ThreadLocalRandom.current().nextLong(max.toNanos() + 1));
  }
}
