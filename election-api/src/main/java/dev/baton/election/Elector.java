package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Campaigns for one election on a {@link LeaseStore}, leads while the store grants it, and steps
 * down on its own before its lease can expire when it cannot renew.
 *
 * <p>Timing follows client-go: a leader renews every {@code retryPeriod}; if no renewal has been
 * confirmed within {@code renewDeadline} of the start of the last confirmed one, it stops leading
 * even if the store cannot be reached, which is before its lease ({@code leaseDuration}) can
 * expire for anyone else. Followers try at once on start, again when the store's watch reports a
 * change, and otherwise when the holder's lease could next expire or every {@code retryPeriod}.
 *
 * <p>All electors share one timer thread and one pool for store calls and callbacks unless given
 * others; an elector owns no thread. Its state is changed by one task at a time.
 */
public final class Elector implements AutoCloseable {

  /** A retry waits between {@code retryPeriod} and this many times it, as client-go's JitterFactor. */
  static final double JITTER = 1.2;

  private static final Logger log = LoggerFactory.getLogger(Elector.class);

  private enum State {
    STOPPED,
    FOLLOWING,
    LEADING,
    STOPPING
  }

  private final LeaseStore store;
  private final String election;
  private final String candidate;
  private final Duration leaseDuration;
  private final Duration renewDeadline;
  private final Duration retryPeriod;
  private final MonotonicClock clock;
  private final ScheduledExecutorService scheduler;
  private final Executor worker;
  private final SerialExecutor engine;
  private final SerialExecutor callbacks;
  private final RenewalBatcher batcher;
  private final List<ElectionListener> listeners;
  private final String logId;
  private final boolean closeOnShutdown;

  // Confined to the engine executor.
  private State state = State.STOPPED;
  private long epoch;
  private boolean callInFlight;
  private boolean attemptPending;
  private Lease lease;
  private Term term;
  private ScheduledFuture<?> nextAction;
  private RenewalBatcher.Ticket renewal;
  private TermRenewals termRenewals;
  private DeadlineTimer deadline;
  private Subscription watch;
  private boolean watching;
  private boolean subscribing;
  private int failuresInARow;
  private long quietUntil;
  private boolean restartAfterStop;
  private boolean stopReleased;
  private final List<CompletableFuture<Void>> stopWaiters = new ArrayList<>();

  // Store calls, releases and watch changes started and not yet finished (any thread). A stop
  // completes only when none is left, so nothing of a closed elector reaches the store after
  // close() returns, where it could end the term of a successor with the same candidate id.
  private final AtomicInteger storeOps = new AtomicInteger();

  // Published for readers on other threads.
  private volatile State publishedState = State.STOPPED;
  private volatile Term publishedTerm;
  private volatile Optional<String> knownLeader = Optional.empty();

  private Elector(Builder b) {
    this.store = b.store;
    this.election = b.election;
    this.candidate = b.candidate;
    this.leaseDuration = b.leaseDuration;
    this.renewDeadline = b.renewDeadline;
    this.retryPeriod = b.retryPeriod;
    this.clock = b.clock;
    this.scheduler = b.scheduler;
    this.worker = b.worker;
    this.engine = new SerialExecutor(worker);
    this.callbacks = new SerialExecutor(worker);
    this.batcher = b.store.renewBatchLimit() > 1 ? RenewalBatcher.of(b.store, scheduler, worker, clock) : null;
    this.listeners = List.copyOf(b.listeners);
    this.logId = "election '" + election + "' candidate '" + candidate + "'";
    this.closeOnShutdown = b.closeOnShutdown;
  }

  public static Builder builder(LeaseStore store) {
    return new Builder(store);
  }

  // ---------------------------------------------------------------- public API

  /**
   * Starts campaigning and returns at once; the first attempt to acquire is made immediately.
   * Starting a started elector does nothing. An elector can be started again after {@link
   * #close()}.
   */
  public void start() {
    if (closeOnShutdown) {
      ShutdownRelease.register(this);
    }
    engine.execute(this::doStart);
  }

  /**
   * Stops: ends the current term (its work is stopped and {@code onRevoked} has returned), then
   * releases the lease so the next candidate takes over at once. Blocks until that is done, at most
   * about {@code leaseDuration}; when called from one of this elector's own callbacks it does not
   * wait for the callbacks to finish.
   */
  @Override
  public void close() {
    ShutdownRelease.unregister(this);
    CompletableFuture<Void> done = new CompletableFuture<>();
    if (callbacks.inTask() || engine.inTask()) {
      engine.execute(() -> doStop(done));
      return;
    }
    // Inline when the engine is idle: the release, and so the next leader, comes a hand-off sooner.
    engine.runOrExecute(() -> doStop(done));
    try {
      done.get(leaseDuration.toMillis() + renewDeadline.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      log.warn("{}: stopping failed", logId, e.getCause());
    } catch (TimeoutException e) {
      log.warn("{}: still stopping after {}; carrying on in the background", logId, Durations.format(leaseDuration.plus(renewDeadline)));
    }
  }

  /**
   * Gives leadership up on purpose: ends the term, releases the lease so another candidate can
   * take it at once, and campaigns again after {@code 2 × retryPeriod}. Does nothing when not
   * leading.
   */
  public void stepDown() {
    engine.execute(this::doStepDown);
  }

  /** True while this node leads and its term is valid by its own monotonic clock. */
  public boolean isLeader() {
    Term t = publishedTerm;
    return t != null && t.isValid();
  }

  /** The current term while leading. */
  public Optional<Term> currentTerm() {
    Term t = publishedTerm;
    return t != null && t.isValid() ? Optional.of(t) : Optional.empty();
  }

  /** Who leads, as this node last learned it from the store; empty when it knows of nobody. */
  public Optional<String> currentLeader() {
    return isLeader() ? Optional.of(candidate) : knownLeader;
  }

  /** True between {@link #start()} and the end of {@link #close()}. */
  public boolean isRunning() {
    return publishedState != State.STOPPED;
  }

  public String election() {
    return election;
  }

  public String candidate() {
    return candidate;
  }

  public Duration leaseDuration() {
    return leaseDuration;
  }

  public Duration renewDeadline() {
    return renewDeadline;
  }

  public Duration retryPeriod() {
    return retryPeriod;
  }

  @Override
  public String toString() {
    return "Elector{" + logId + ", state=" + publishedState + ", store=" + store.describe() + "}";
  }

  // ---------------------------------------------------------------- transitions (engine executor)

  private void setState(State s) {
    state = s;
    publishedState = s;
  }

  private void doStart() {
    if (state == State.STOPPING) {
      restartAfterStop = true;
      return;
    }
    if (state != State.STOPPED) {
      return;
    }
    epoch++;
    failuresInARow = 0;
    setState(State.FOLLOWING);
    log.debug("{}: campaigning on {}", logId, store.describe());
    // No watch yet: most starts on a free election lead at once, and a watch set up beside the
    // first attempt would compete with it for the connection and then be closed unused (with
    // thousands of elections, thousands of watches opened and closed). It starts once an attempt
    // shows we follow; one that goes live after a release looks again (see subscribe).
    attempt();
  }

  private void subscribe(long e) {
    subscribing = true;
    storeOps.incrementAndGet();
    worker.execute(
        () -> {
          Optional<Subscription> sub;
          try {
            // The store's thread only starts a call here (attempt() never blocks), so the event
            // need not wait for a pool thread to be handed over.
            sub = store.watch(election, () -> engine.runOrExecute(() -> onWatchEvent(e)));
          } catch (RuntimeException ex) {
            log.warn("{}: cannot watch the election on {}; polling instead", logId, store.describe(), ex);
            sub = Optional.empty();
          }
          Optional<Subscription> result = sub;
          engine.execute(
              () -> {
                try {
                  if (e != epoch) {
                    result.ifPresent(Subscription::close);
                    return;
                  }
                  subscribing = false;
                  if (state == State.LEADING) {
                    // Elected before the watch was up; a leader has no use for it.
                    result.ifPresent(this::closeWatch);
                    return;
                  }
                  watching = result.isPresent();
                  watch = result.orElse(null);
                  if (watching && state == State.FOLLOWING && !callInFlight && clock.nanoTime() - quietUntil >= 0) {
                    // A release between our first attempt and the watch going live would go unseen.
                    // Not while backing off: the attempt scheduled for its end covers that.
                    attempt();
                  }
                } finally {
                  storeOpEnded();
                }
              });
        });
  }

  private void onWatchEvent(long e) {
    if (e != epoch || state != State.FOLLOWING) {
      return;
    }
    if (clock.nanoTime() - quietUntil < 0) {
      return;
    }
    attempt();
  }

  /** A follower's attempt to acquire: one call in flight at a time; later requests coalesce. */
  private void attempt() {
    if (state != State.FOLLOWING) {
      return;
    }
    if (callInFlight) {
      attemptPending = true;
      return;
    }
    cancel(nextAction);
    nextAction = null;
    attemptPending = false;
    callInFlight = true;
    long e = epoch;
    long t0 = clock.nanoTime();
    call(() -> store.tryAcquire(election, candidate, leaseDuration), r -> onAcquireResult(e, t0, r), ex -> onAcquireFailed(e, ex));
  }

  private void onAcquireResult(long e, long t0, Acquisition result) {
    callInFlight = false;
    if (e != epoch || state != State.FOLLOWING) {
      result.lease().ifPresent(this::releaseQuietly);
      afterCall();
      return;
    }
    recovered();
    if (result.isGranted()) {
      Lease granted = result.lease().orElseThrow();
      long validUntil = t0 + renewDeadline.toNanos();
      if (clock.nanoTime() - validUntil >= 0) {
        // The grant was confirmed so late that the renew deadline is already behind us: leading
        // now could outlast the lease. Give it back and try again.
        log.warn("{}: grant confirmed only after the renew deadline ({}); releasing it", logId, Durations.format(renewDeadline));
        releaseQuietly(granted);
        watchAgain();
        backOff(jittered(retryPeriod));
        return;
      }
      becomeLeader(granted, validUntil);
      return;
    }
    watchAgain();
    LeaseRecord holder = result.holder().orElseThrow();
    learnLeader(Optional.of(holder.holder()));
    scheduleFollowerAttempt(holder.expiresIn());
    afterCall();
  }

  private void onAcquireFailed(long e, RuntimeException ex) {
    callInFlight = false;
    if (e != epoch || state != State.FOLLOWING) {
      afterCall();
      return;
    }
    watchAgain();
    failed("cannot reach the store to campaign", ex);
    scheduleAttempt(jittered(retryPeriod));
  }

  /** After a call completed, run an attempt that was asked for while it was in flight. */
  /**
   * A leader learns what it needs from its renewals, so it drops the watch: otherwise each of its
   * own renewals could come back as an event to ignore (a NOTIFY, a Kubernetes watch event, an
   * expiry timer), which with thousands of elections is most of the process's work.
   */
  private void unwatch() {
    if (watch != null) {
      closeWatch(watch);
    }
    watch = null;
    watching = false;
  }

  private void closeWatch(Subscription w) {
    storeOps.incrementAndGet();
    worker.execute(
        () -> {
          try {
            w.close();
          } catch (RuntimeException ex) {
            log.warn("{}: closing the watch failed", logId, ex);
          } finally {
            storeOpEnded();
          }
        });
  }

  /** A follower again: watch, unless a watch is already being set up. */
  private void watchAgain() {
    if (watch == null && !subscribing) {
      subscribe(epoch);
    }
  }

  private void afterCall() {
    if (attemptPending && state == State.FOLLOWING && !callInFlight && clock.nanoTime() - quietUntil >= 0) {
      attempt();
    }
  }

  private void scheduleFollowerAttempt(Optional<Duration> expiresIn) {
    if (watching && store.watchReportsExpiry()) {
      // The watch reports release and expiry alike: nothing to poll for.
      cancel(nextAction);
      nextAction = null;
      return;
    }
    Duration delay;
    if (expiresIn.isPresent() && expiresIn.get().compareTo(retryPeriod) < 0) {
      // Try right when the holder's lease could run out; a small spread keeps followers apart.
      delay = expiresIn.get().plus(spread(Duration.ofMillis(Math.min(50, retryPeriod.toMillis() / 10))));
    } else if (watching && expiresIn.isPresent()) {
      // Releases arrive by watch; only an expiry needs a visit, and not before it can happen.
      delay = expiresIn.get().plus(spread(Duration.ofMillis(Math.min(50, retryPeriod.toMillis() / 10))));
    } else {
      delay = jittered(retryPeriod);
    }
    scheduleAttempt(delay);
  }

  /**
   * Campaigns again only after {@code pause}, ignoring watch events until then: after giving a
   * lease back, our own release must not call us straight back in ahead of the others.
   */
  private void backOff(Duration pause) {
    quietUntil = clock.nanoTime() + pause.toNanos();
    scheduleAttempt(pause);
  }

  private void scheduleAttempt(Duration delay) {
    cancel(nextAction);
    long e = epoch;
    nextAction = schedule(delay, () -> {
      if (e == epoch) {
        attempt();
      }
    });
  }

  private void becomeLeader(Lease granted, long validUntil) {
    attemptPending = false;
    lease = granted;
    term = new Term(election, candidate, granted.token(), clock, worker, validUntil);
    setState(State.LEADING);
    publishedTerm = term;
    log.info("{}: elected with fencing token {} on {} (lease {})", logId, granted.token(), store.describe(), Durations.format(granted.ttl()));
    Term t = term;
    emit(l -> l.onElected(t));
    learnLeader(Optional.of(candidate));
    unwatch();
    if (batcher != null) {
      termRenewals = new TermRenewals(term);
    } else {
      deadline = new DeadlineTimer(term, true);
    }
    scheduleRenew(validUntil - renewDeadline.toNanos() + retryPeriod.toNanos());
    afterCall();
  }

  private void scheduleRenew(long atNanos) {
    cancel(nextAction);
    nextAction = null;
    cancelRenewal();
    Term t = term;
    if (batcher != null) {
      // Counted as a call in flight from now on: an outcome may follow until the ticket is cancelled.
      callInFlight = true;
      storeOps.incrementAndGet();
      renewal = batcher.renew(lease, atNanos, renewSlack(), t.validUntilNanos(), termRenewals);
      return;
    }
    nextAction = schedule(Duration.ofNanos(Math.max(0, atNanos - clock.nanoTime())), () -> {
      if (term == t) {
        renew();
      }
    });
  }

  /** How much earlier than due a batched renewal may go, so that renewals due close together share a call. */
  private long renewSlack() {
    return Math.min(retryPeriod.toNanos() / 8, TimeUnit.MILLISECONDS.toNanos(100));
  }

  private void cancelRenewal() {
    RenewalBatcher.Ticket r = renewal;
    renewal = null;
    if (r != null && r.cancel()) {
      callInFlight = false;
      storeOpEnded();
    }
  }

  /**
   * Steps down when the renew deadline has passed. Runs first in every leader transition, so a
   * leader that was stalled (a GC pause, a suspended VM) stops before it does anything else.
   */
  private boolean checkDeadline() {
    if (state != State.LEADING || clock.nanoTime() - term.validUntilNanos() < 0) {
      return false;
    }
    log.error("{}: no renewal confirmed within the renew deadline ({}); stepping down with token {}", logId, Durations.format(renewDeadline), term.token());
    endTerm();
    // The lease may still be ours in the store; once our work has stopped, give it back so the
    // next candidate need not wait for it to expire.
    Lease stale = lease;
    lease = null;
    callbacks.execute(() -> releaseQuietly(stale));
    setState(State.FOLLOWING);
    watchAgain();
    learnLeader(Optional.empty());
    backOff(jittered(retryPeriod));
    return true;
  }

  private void renew() {
    if (state != State.LEADING || checkDeadline()) {
      return;
    }
    if (callInFlight) {
      return;
    }
    callInFlight = true;
    Term t = term;
    Lease current = lease;
    long t0 = clock.nanoTime();
    call(() -> store.renew(current), r -> onRenewed(t, t0, r), ex -> onRenewFailed(t, ex));
  }

  private void onRenewed(Term t, long t0, Lease renewed) {
    callInFlight = false;
    if (term != t || state != State.LEADING) {
      // The term ended while the call was out; the lease is ours in the store but we no longer
      // act on it. Give it back.
      releaseQuietly(renewed);
      afterCall();
      return;
    }
    recovered();
    if (checkDeadline()) {
      return;
    }
    long validUntil = t0 + renewDeadline.toNanos();
    lease = renewed;
    if (validUntil - t.validUntilNanos() > 0) {
      t.extendTo(validUntil);
    }
    log.debug("{}: renewed, token {}", logId, t.token());
    scheduleRenew(t0 + retryPeriod.toNanos());
  }

  private void onRenewFailed(Term t, RuntimeException ex) {
    callInFlight = false;
    if (term != t || state != State.LEADING) {
      afterCall();
      return;
    }
    if (checkDeadline()) {
      return;
    }
    if (ex instanceof LeaseLostException) {
      LeaseLostException lost = (LeaseLostException) ex;
      log.info("{}: lost leadership with token {}: {}", logId, t.token(), ex.getMessage());
      endTerm();
      lease = null;
      setState(State.FOLLOWING);
      watchAgain();
      learnLeader(lost.holder());
      attempt();
      return;
    }
    failed("renewal failed; leading on until the renew deadline (" + Durations.format(t.remaining()) + " left)", ex);
    long retryAt = clock.nanoTime() + Math.min(retryPeriod.toNanos(), Math.max(0, t.validUntilNanos() - clock.nanoTime()));
    scheduleRenew(retryAt);
  }

  private void stepDownFrom(Term t) {
    if (term == t) {
      doStepDown();
    }
  }

  private void doStepDown() {
    if (state != State.LEADING || checkDeadline()) {
      return;
    }
    log.info("{}: stepping down with token {}", logId, term.token());
    Lease held = lease;
    endTerm();
    lease = null;
    setState(State.FOLLOWING);
    watchAgain();
    learnLeader(Optional.empty());
    // Released only after our work has stopped; the pause gives others the first chance.
    callbacks.execute(() -> release(held));
    backOff(retryPeriod.multipliedBy(2));
  }

  private void doStop(CompletableFuture<Void> done) {
    if (state == State.STOPPED) {
      done.complete(null);
      return;
    }
    restartAfterStop = false;
    stopWaiters.add(done);
    if (state == State.STOPPING) {
      return;
    }
    epoch++;
    cancel(nextAction);
    nextAction = null;
    attemptPending = false;
    unwatch();
    subscribing = false;
    Lease held = state == State.LEADING ? lease : null;
    if (state == State.LEADING) {
      log.info("{}: closing; ending term with token {}", logId, term.token());
      endTerm();
    }
    lease = null;
    stopReleased = false;
    setState(State.STOPPING);
    // Behind onRevoked in the callback queue: the lease goes only once the leader's work stopped.
    callbacks.execute(
        () -> {
          if (held != null) {
            // Already on a pool thread, and nothing else of ours is due: release here.
            release(held);
          }
          engine.execute(
              () -> {
                stopReleased = true;
                finishStopIfIdle();
              });
        });
  }

  /** Ends a stop once the release was started and every store call of this elector returned. */
  private void finishStopIfIdle() {
    if (state == State.STOPPING && stopReleased && storeOps.get() == 0) {
      finishStop();
    }
  }

  private void storeOpEnded() {
    if (storeOps.decrementAndGet() == 0 && publishedState == State.STOPPING) {
      engine.execute(this::finishStopIfIdle);
    }
  }

  private void finishStop() {
    setState(State.STOPPED);
    learnLeader(Optional.empty());
    List<CompletableFuture<Void>> waiters = new ArrayList<>(stopWaiters);
    stopWaiters.clear();
    waiters.forEach(w -> w.complete(null));
    if (restartAfterStop) {
      restartAfterStop = false;
      doStart();
    }
  }

  private void endTerm() {
    Term t = term;
    term = null;
    publishedTerm = null;
    if (deadline != null) {
      deadline.cancel();
    }
    termRenewals = null;
    cancel(nextAction);
    cancelRenewal();
    deadline = null;
    nextAction = null;
    t.end();
    emit(l -> l.onRevoked(t));
  }

  // ---------------------------------------------------------------- helpers

  private void learnLeader(Optional<String> leader) {
    if (!leader.equals(knownLeader)) {
      knownLeader = leader;
      emit(l -> l.onLeaderChanged(leader));
    }
  }

  private void emit(Consumer<ElectionListener> event) {
    callbacks.execute(
        () -> {
          for (ElectionListener l : listeners) {
            try {
              event.accept(l);
            } catch (WorkFailedException e) {
              engine.execute(() -> stepDownFrom(e.term));
            } catch (RuntimeException e) {
              log.warn("{}: a listener threw; the others still run", logId, e);
            }
          }
        });
  }

  private void failed(String what, RuntimeException ex) {
    failuresInARow++;
    // Every failure matters, but one WARN per streak (and a reminder now and then) says as much
    // as one every retry period.
    if (failuresInARow == 1 || failuresInARow % 10 == 0) {
      log.warn("{}: {} on {} (failure {} in a row): {}", logId, what, store.describe(), failuresInARow, ex.toString(), ex);
    } else {
      log.debug("{}: {} (failure {} in a row): {}", logId, what, failuresInARow, ex.toString());
    }
  }

  private void recovered() {
    if (failuresInARow > 0) {
      log.info("{}: {} answers again after {} failures", logId, store.describe(), failuresInARow);
      failuresInARow = 0;
    }
  }

  private void releaseQuietly(Lease l) {
    storeOps.incrementAndGet();
    worker.execute(() -> releaseCounted(l));
  }

  /** Releases on the calling thread, which must be a pool thread that may block. */
  private void release(Lease l) {
    storeOps.incrementAndGet();
    releaseCounted(l);
  }

  private void releaseCounted(Lease l) {
    try {
      store.release(l);
    } catch (RuntimeException e) {
      log.warn("{}: could not release the lease with token {}; it will expire on its own: {}", logId, l.token(), e.toString(), e);
    } finally {
      storeOpEnded();
    }
  }

  private interface StoreCall<T> {
    T run();
  }

  /** Runs a blocking store call on the worker pool and hands its outcome back to the engine. */
  private <T> void call(StoreCall<T> body, Consumer<T> onResult, Consumer<RuntimeException> onError) {
    storeOps.incrementAndGet();
    worker.execute(
        () -> {
          T result;
          try {
            result = body.run();
          } catch (RuntimeException e) {
            engine.runOrExecute(() -> handOver(() -> onError.accept(e)));
            return;
          } catch (Error e) {
            engine.execute(() -> handOver(() -> onError.accept(new LeaseStoreException(election, "store call failed", e))));
            throw e;
          }
          // This pool thread is free now: carry on with the outcome here rather than wake another.
          engine.runOrExecute(() -> handOver(() -> onResult.accept(result)));
        });
  }

  /** Runs a call's outcome on the engine, then counts the call finished (after any release it started). */
  private void handOver(Runnable outcome) {
    try {
      outcome.run();
    } finally {
      storeOpEnded();
    }
  }

  /**
   * A term's batched renewals. The batcher watches each call it makes against the earliest renew
   * deadline in it, so a leader needs no deadline timer of its own while its renewals go through;
   * only when a call is overdue does it start one, which ends itself once a renewal got through.
   */
  private final class TermRenewals implements RenewalBatcher.Outcome {
    private final Term t;

    TermRenewals(Term t) {
      this.t = t;
    }

    @Override
    public void arrived(RenewalBatcher.Ticket ticket, long startedNanos, Renewal outcome) {
      engine.runOrExecute(() -> handOver(() -> {
        if (renewal == ticket) {
          renewal = null;
        }
        if (outcome.isRenewed()) {
          onRenewed(t, startedNanos, outcome.leaseOrThrow());
        } else {
          onRenewFailed(t, outcome.failure().orElseThrow());
        }
      }));
    }

    @Override
    public void overdue(RenewalBatcher.Ticket ticket) {
      engine.execute(() -> {
        if (term == t && !checkDeadline() && deadline == null) {
          deadline = new DeadlineTimer(t, false);
        }
      });
    }
  }

  /**
   * Steps the term down when its renew deadline passes. A renewal only moves the deadline in the
   * term; this timer, finding it moved, sets itself again on the timer thread (so renewals cause no
   * timer churn and no hand-offs to the engine), or, for a batched leader, ends: the batcher watches
   * the deadline again.
   */
  private final class DeadlineTimer implements Runnable {
    private final Term t;
    private final boolean rearm;
    private volatile boolean cancelled;
    private volatile ScheduledFuture<?> future;

    DeadlineTimer(Term t, boolean rearm) {
      this.t = t;
      this.rearm = rearm;
      arm();
    }

    private void arm() {
      long now = clock.nanoTime();
      long due = t.validUntilNanos();
      long grid = renewSlack();
      if (due - now > grid) {
        // Far from due: wake a little early on a grid shared with the other leaders, so the timer
        // thread serves many of them per wake-up; the last stretch is timed exactly.
        due -= Math.floorMod(due, grid);
      }
      future = scheduler.schedule(this, Math.max(0, due - now), TimeUnit.NANOSECONDS);
      // cancel() may have read the previous future.
      if (cancelled) {
        future.cancel(false);
      }
    }

    @Override
    public void run() {
      if (cancelled) {
        return;
      }
      if (t.validUntilNanos() - clock.nanoTime() > 0) {
        if (rearm) {
          arm();
        } else {
          engine.execute(() -> {
            if (deadline == this) {
              deadline = null;
            }
          });
        }
        return;
      }
      engine.execute(() -> {
        if (term == t) {
          checkDeadline();
        }
      });
    }

    void cancel() {
      cancelled = true;
      ScheduledFuture<?> f = future;
      if (f != null) {
        f.cancel(false);
      }
    }
  }

  /** Timers only hand their action to the engine: the shared timer thread never runs our code. */
  private ScheduledFuture<?> schedule(Duration delay, Runnable action) {
    return scheduler.schedule(() -> engine.execute(action), delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  private static void cancel(ScheduledFuture<?> timer) {
    if (timer != null) {
      timer.cancel(false);
    }
  }

  private static Duration jittered(Duration base) {
    double factor = 1 + ThreadLocalRandom.current().nextDouble() * (JITTER - 1);
    return Duration.ofNanos((long) (base.toNanos() * factor));
  }

  private static Duration spread(Duration max) {
    if (max.isZero()) {
      return Duration.ZERO;
    }
    return Duration.ofNanos(ThreadLocalRandom.current().nextLong(max.toNanos() + 1));
  }

  // ---------------------------------------------------------------- builder

  /** Builds an {@link Elector}; validates everything in {@link #build()}. */
  public static final class Builder {
    private final LeaseStore store;
    private String election;
    private String candidate;
    private Duration leaseDuration = Duration.ofSeconds(15);
    private Duration renewDeadline = Duration.ofSeconds(10);
    private Duration retryPeriod = Duration.ofSeconds(2);
    private MonotonicClock clock = MonotonicClock.system();
    private ScheduledExecutorService scheduler;
    private Executor worker;
    private boolean closeOnShutdown = true;
    private final Set<String> timingsSet = new HashSet<>();
    private final List<ElectionListener> listeners = new ArrayList<>();

    private Builder(LeaseStore store) {
      this.store = requireNonNull(store, "store");
    }

    /** The election to campaign for. Required. */
    public Builder election(String election) {
      this.election = requireNonNull(election, "election");
      return this;
    }

    /** This node's identity, unique among the candidates. Default: host name and process id. */
    public Builder candidate(String candidate) {
      this.candidate = requireNonNull(candidate, "candidate");
      return this;
    }

    /** How long a lease lasts without renewal: the longest failover after a crash. Default 15 s. */
    public Builder leaseDuration(Duration leaseDuration) {
      this.leaseDuration = requireNonNull(leaseDuration, "leaseDuration");
      timingsSet.add(ElectionProperties.LEASE_DURATION);
      return this;
    }

    /** How long a leader goes on without a confirmed renewal before it steps down. Default 10 s. */
    public Builder renewDeadline(Duration renewDeadline) {
      this.renewDeadline = requireNonNull(renewDeadline, "renewDeadline");
      timingsSet.add(ElectionProperties.RENEW_DEADLINE);
      return this;
    }

    /** How often a leader renews and a polling follower tries. Default 2 s. */
    public Builder retryPeriod(Duration retryPeriod) {
      this.retryPeriod = requireNonNull(retryPeriod, "retryPeriod");
      timingsSet.add(ElectionProperties.RETRY_PERIOD);
      return this;
    }

    /**
     * Reads {@code election.name}, {@code election.candidate-id} and the three durations; values
     * set on the builder before or after this call win in the order of the calls. Refuses, as
     * likely typos, {@code election.*} keys that neither the core nor a backend on the classpath
     * reads, and keys with a misspelt prefix ({@code electon.name}).
     */
    public Builder configure(ElectionProperties properties) {
      requireNonNull(properties, "properties");
      properties.checkKeys();
      properties.get(ElectionProperties.NAME).ifPresent(this::election);
      properties.get(ElectionProperties.CANDIDATE_ID).ifPresent(this::candidate);
      properties.duration(ElectionProperties.LEASE_DURATION).ifPresent(this::leaseDuration);
      properties.duration(ElectionProperties.RENEW_DEADLINE).ifPresent(this::renewDeadline);
      properties.duration(ElectionProperties.RETRY_PERIOD).ifPresent(this::retryPeriod);
      return this;
    }

    public Builder listener(ElectionListener listener) {
      listeners.add(requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Runs {@code work} for every term this node leads: started with the term, stopped (the
     * returned {@link AutoCloseable} closed) when it ends, started again with the next term.
     */
    public Builder whileLeader(TermWork work) {
      requireNonNull(work, "work");
      listeners.add(new TermScopedWork(work));
      return this;
    }

    /** The timer all electors share by default is one daemon thread; supply another here. */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** Where blocking store calls and listener callbacks run. Default: a shared elastic pool. */
    public Builder executor(Executor executor) {
      this.worker = requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Whether the JVM's shutdown (SIGTERM, Ctrl-C, {@code System.exit}) closes this elector once
     * started, so its lease is released and another replica takes over at once. Default true: a
     * stopped replica should hand over in milliseconds, not after its lease runs out. Turn it off
     * where something else closes the elector in its own shutdown order (a Spring context, say),
     * so the leader's work stops while what it uses is still open.
     */
    public Builder closeOnShutdown(boolean closeOnShutdown) {
      this.closeOnShutdown = closeOnShutdown;
      return this;
    }

    /** The monotonic clock for deadlines. Default: {@link System#nanoTime()}. */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    public Elector build() {
      if (election == null || election.isBlank()) {
        throw new ConfigurationException(ElectionProperties.NAME + " (election) must not be blank, but was " + (election == null ? "not set" : "'" + election + "'"));
      }
      if (candidate == null) {
        candidate = defaultCandidate();
      }
      if (candidate.isBlank()) {
        throw new ConfigurationException(ElectionProperties.CANDIDATE_ID + " (candidate) must not be blank, but was '" + candidate + "'");
      }
      TimingRules.check(leaseDuration, renewDeadline, retryPeriod, JITTER, timingsSet);
      store.checkElectionName(election);
      if (scheduler == null) {
        scheduler = SharedExecutors.scheduler();
      }
      if (worker == null) {
        worker = SharedExecutors.worker();
      }
      return new Elector(this);
    }

    static String defaultCandidate() {
      String host;
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("localhost");
      }
      return host + "-" + ProcessHandle.current().pid();
    }
  }
}
