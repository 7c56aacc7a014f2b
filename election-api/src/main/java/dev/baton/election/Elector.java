package dev.baton.election;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Campaigns for one election on a {@link LeaseStore}, leads while the store grants it, and steps
 * down on its own before its lease can expire when it cannot renew.
 *
 * <p>Timing follows client-go: a leader renews every {@code retryPeriod}; if no renewal has been
 * confirmed within {@code renewDeadline} of the start of the last confirmed one, it stops leading
 * even if the store cannot be reached, which is before its lease ({@code leaseDuration}) can expire
 * for anyone else. Followers try at once on start, again when the store's watch reports a change,
 * and otherwise when the holder's lease could next expire or every {@code retryPeriod}.
 *
 * <p>All electors share one timer thread and one pool for store calls and callbacks unless given
 * others; an elector owns no thread. Its state is changed by one task at a time: the phases
 * (following, leading, stopping) and the moves between them are in {@code Campaign}.
 */
public final class Elector implements AutoCloseable {

  /**
   * A retry waits between {@code retryPeriod} and this many times it, as client-go's JitterFactor.
   */
  static final double JITTER = 1.2;

  private final Campaign campaign;

  Elector(Campaign campaign) {
    this.campaign = campaign;
  }

  public static ElectorBuilder builder(LeaseStore store) {
    return new ElectorBuilder(store);
  }

  /**
   * Starts campaigning and returns at once; the first attempt to acquire is made immediately.
   * Starting a started elector does nothing. An elector can be started again after {@link
   * #close()}.
   */
  public void start() {
    if (campaign.closeOnShutdown) {
      ShutdownRelease.register(this);
    }
    campaign.engine.execute(campaign::start);
  }

  /**
   * Stops: ends the current term (its work is stopped and {@code onRevoked} has returned), then
   * releases the lease so the next candidate takes over at once. Blocks until that is done, at most
   * about {@code leaseDuration}; when called from one of this elector's own callbacks it does not
   * wait for the callbacks to finish. This is what the JVM's shutdown calls, unless the builder's
   * {@code closeOnShutdown(false)} said not to.
   */
  @Override
  public void close() {
    ShutdownRelease.unregister(this);
    CompletableFuture<Void> done = new CompletableFuture<>();
    if (campaign.callbacks.inTask() || campaign.engine.inTask()) {
      campaign.engine.execute(() -> campaign.stop(done));
      return;
    }
    // Inline when the engine is idle: the release, and so the next leader, comes a hand-off sooner.
    campaign.engine.runOrExecute(() -> campaign.stop(done));
    Duration limit = campaign.leaseDuration.plus(campaign.renewDeadline);
    try {
      done.get(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      Campaign.log.warn("{}: stopping failed", campaign.logId, e.getCause());
    } catch (TimeoutException e) {
      Campaign.log.warn(
          "{}: still stopping after {}; carrying on in the background",
          campaign.logId,
          Durations.format(limit));
    }
  }

  /**
   * Gives leadership up on purpose: ends the term, releases the lease so another candidate can take
   * it at once, and campaigns again after {@code 2 × retryPeriod}. Does nothing when not leading.
   */
  public void stepDown() {
    campaign.engine.execute(campaign::stepDown);
  }

  /**
   * Gives {@code term} up because the leader's work failed: ends it with {@link
   * StepDownReason#WORK_FAILED}, then releases and campaigns again as {@link #stepDown()} does.
   * Does nothing unless {@code term} is still this elector's current term, so work that fails late
   * can never end a later term.
   */
  public void workFailed(Term term) {
    java.util.Objects.requireNonNull(term, "term");
    campaign.engine.execute(() -> campaign.workFailed(term));
  }

  /** True while this node leads and its term is valid by its own monotonic clock. */
  public boolean isLeader() {
    Term t = campaign.publishedTerm();
    return t != null && t.isValid();
  }

  /** The current term while leading. */
  public Optional<Term> currentTerm() {
    Term t = campaign.publishedTerm();
    return t != null && t.isValid() ? Optional.of(t) : Optional.empty();
  }

  /** Who leads, as this node last learned it from the store; empty when it knows of nobody. */
  public Optional<String> currentLeader() {
    return isLeader() ? Optional.of(campaign.candidate) : campaign.knownLeader();
  }

  /** True between {@link #start()} and the end of {@link #close()}. */
  public boolean isRunning() {
    return campaign.published() != Phase.Kind.STOPPED;
  }

  public String election() {
    return campaign.election;
  }

  public String candidate() {
    return campaign.candidate;
  }

  public Duration leaseDuration() {
    return campaign.leaseDuration;
  }

  public Duration renewDeadline() {
    return campaign.renewDeadline;
  }

  public Duration retryPeriod() {
    return campaign.retryPeriod;
  }

  @Override
  public String toString() {
    return "Elector{"
        + campaign.logId
        + ", state="
        + campaign.published()
        + ", store="
        + campaign.store.describe()
        + "}";
  }
}
