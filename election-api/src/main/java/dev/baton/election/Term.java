package dev.baton.election;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * One continuous period of leadership: from the grant the store confirmed to the moment this node
 * stopped leading (lost, stepped down, closed, or could not renew in time). A node that leads
 * again gets a new term with a higher fencing token.
 *
 * <p>Leader work belongs to a term. Check {@link #isValid()} before each step that must only
 * happen while leading, pass {@link #token()} with every write to a shared resource, and stop
 * when {@link #ended()} completes. {@link Elector.Builder#whileLeader} does the starting and
 * stopping for you.
 */
public final class Term {

  private final String election;
  private final String candidate;
  private final FencingToken token;
  private final MonotonicClock clock;
  private final Executor callbackExecutor;
  private final CompletableFuture<Void> ended = new CompletableFuture<>();
  private volatile long validUntilNanos;
  private volatile long endedAtNanos;

  Term(String election, String candidate, FencingToken token, MonotonicClock clock, Executor callbackExecutor, long validUntilNanos) {
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
    return !ended.isDone() && clock.nanoTime() - validUntilNanos < 0;
  }

  /** How long the term stays valid if no further renewal succeeds; zero once it is not valid. */
  public Duration remaining() {
    if (ended.isDone()) {
      return Duration.ZERO;
    }
    return Duration.ofNanos(Math.max(0, validUntilNanos - clock.nanoTime()));
  }

  public boolean isEnded() {
    return ended.isDone();
  }

  /** Completes when the term ends (the moment the elector decides it, before {@code onRevoked}). */
  public CompletionStage<Void> ended() {
    return ended.minimalCompletionStage();
  }

  /** Runs {@code action} off the elector's own threads once the term has ended. */
  public void onEnd(Runnable action) {
    ended.whenCompleteAsync((v, e) -> action.run(), callbackExecutor);
  }

  long validUntilNanos() {
    return validUntilNanos;
  }

  void extendTo(long nanos) {
    validUntilNanos = nanos;
  }

  void end() {
    endedAtNanos = clock.nanoTime();
    ended.complete(null);
  }

  /**
   * The monotonic time after which this term acted no more: the earlier of its end and its
   * validity deadline. Meaningful once ended.
   */
  long lastValidNanos() {
    return Math.min(endedAtNanos, validUntilNanos);
  }

  @Override
  public String toString() {
    return "Term{election=" + election + ", candidate=" + candidate + ", token=" + token + (isEnded() ? ", ended" : "") + "}";
  }
}
