package dev.baton.election;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One continuous period of leadership: from the grant the store confirmed to the moment this node
 * stopped leading (lost, stepped down, closed, or could not renew in time). A node that leads again
 * gets a new term with a higher fencing token.
 *
 * <p>Leader work belongs to a term. Check {@link #isValid()} before each step that must only happen
 * while leading, pass {@link #token()} with every write to a shared resource, and stop when {@link
 * #ended()} completes. {@link ElectorBuilder#whileLeader} does the starting and stopping for you.
 *
 * <p>The end of a term is told in order, with the elector's other callbacks and after the ones
 * before it (an {@code onElected} still running finishes first): the {@link #onEnd} actions, then
 * the {@link #ended()} dependents, then {@code onRevoked}. {@link #isValid()} turns false earlier,
 * the moment the elector decides the term is over.
 */
public final class Term {

  private static final Logger log = LoggerFactory.getLogger(Term.class);

  private final String election;
  private final String candidate;
  private final FencingToken token;
  private final MonotonicClock clock;
  private final Executor callbackExecutor;
  private final CompletableFuture<Void> ended = new CompletableFuture<>();
  private final List<Runnable> onEnd = new ArrayList<>();
  private volatile boolean over;
  private boolean told;
  private volatile long validUntilNanos;
  private volatile long endedAtNanos;

  Term(
      String election,
      String candidate,
      FencingToken token,
      MonotonicClock clock,
      Executor callbackExecutor,
      long validUntilNanos) {
    this.election = election;
    this.candidate = candidate;
    this.token = token;
    this.clock = clock;
    this.callbackExecutor = callbackExecutor;
    this.validUntilNanos = validUntilNanos;
  }

  public String election() {
    return election;
  }

  public String candidate() {
    return candidate;
  }

  /** The fencing token of this term: hand it to every write the leader makes. */
  public FencingToken token() {
    return token;
  }

  /**
   * True while this node may act as leader: the term has not ended and the local renew deadline,
   * measured on the monotonic clock from the start of the last confirmed renewal, has not passed.
   * It turns false on its own after a stall, before the elector even runs again.
   */
  public boolean isValid() {
    return !over && clock.nanoTime() - validUntilNanos < 0;
  }

  /** How long the term stays valid if no further renewal succeeds; zero once it is not valid. */
  public Duration remaining() {
    if (over) {
      return Duration.ZERO;
    }
    return Duration.ofNanos(Math.max(0, validUntilNanos - clock.nanoTime()));
  }

  /** True once the elector decided the term is over; its end may not have been told yet. */
  public boolean isEnded() {
    return over;
  }

  /**
   * Completes when the term's end is told: on the elector's callbacks executor, after the {@link
   * #onEnd} actions and before {@code onRevoked}. Dependents added without an executor run there.
   */
  public CompletionStage<Void> ended() {
    return ended.minimalCompletionStage();
  }

  /**
   * Runs {@code action} when the term's end is told, before {@code onRevoked}; at once on the
   * elector's pool when that has already happened. An action that throws is logged.
   */
  public void onEnd(Runnable action) {
    synchronized (onEnd) {
      if (!told) {
        onEnd.add(action);
        return;
      }
    }
    callbackExecutor.execute(() -> runLogged(action));
  }

  long validUntilNanos() {
    return validUntilNanos;
  }

  void extendTo(long nanos) {
    validUntilNanos = nanos;
  }

  /** The elector decided the term is over: it is invalid from now on. */
  void markEnded() {
    endedAtNanos = clock.nanoTime();
    over = true;
  }

  /** Tells the end: on the callbacks executor, ahead of {@code onRevoked}. */
  void signalEnded() {
    // A plain array and loop: this runs once a term, uncompiled, on the way to the release, where
    // a list copy and a forEach with a bound method reference cost tens of microseconds more.
    Runnable[] actions;
    synchronized (onEnd) {
      actions = onEnd.toArray(new Runnable[0]);
      onEnd.clear();
      told = true;
    }
    for (Runnable action : actions) {
      runLogged(action);
    }
    ended.complete(null);
  }

  private void runLogged(Runnable action) {
    try {
      action.run();
    } catch (Throwable e) {
      log.warn(
          "election '{}' candidate '{}': an onEnd action of the term with token {} threw",
          election,
          candidate,
          token,
          e);
    }
  }

  /**
   * The monotonic time after which this term acted no more: the earlier of its end and its validity
   * deadline. Meaningful once ended.
   */
  long lastValidNanos() {
    return Math.min(endedAtNanos, validUntilNanos);
  }

  @Override
  public String toString() {
    return "Term{election="
        + election
        + ", candidate="
        + candidate
        + ", token="
        + token
        + (isEnded() ? ", ended" : "")
        + "}";
  }
}
