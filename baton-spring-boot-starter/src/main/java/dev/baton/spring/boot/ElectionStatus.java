package dev.baton.spring.boot;

import dev.baton.election.Elector;
import dev.baton.election.ElectorObserver;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.StepDownReason;
import dev.baton.election.Term;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What health and info need beyond the {@link Elector}'s own getters, gathered from its observer
 * calls: the term it believes it holds, when a renewal was last confirmed, and how long the store
 * has been failing.
 */
final class ElectionStatus {

  private static final long NONE = Long.MIN_VALUE;

  private volatile Term term;
  private volatile Instant lastConfirmed;
  private volatile long failingSinceNanos = NONE;
  private volatile long lastFailureNanos = NONE;
  private volatile String lastError;

  ElectorObserver observer() {
    return new ElectorObserver() {
      @Override
      public void termStarted(Term t, Optional<Duration> withoutLeader) {
        term = t;
        confirmed();
      }

      @Override
      public void termEnded(Term t, StepDownReason reason) {
        if (term == t) {
          term = null;
        }
      }

      @Override
      public void renewed(Term t, Duration latency) {
        confirmed();
      }

      @Override
      public void renewalFailed(Term t, RuntimeException cause) {
        failed(cause);
      }

      @Override
      public void campaignFailed(RuntimeException cause) {
        failed(cause);
      }
    };
  }

  private synchronized void confirmed() {
    lastConfirmed = Instant.now();
    failingSinceNanos = NONE;
  }

  private synchronized void failed(RuntimeException cause) {
    long now = System.nanoTime();
    if (failingSinceNanos == NONE) {
      failingSinceNanos = now;
    }
    lastFailureNanos = now;
    lastError = cause.getClass().getSimpleName() + ": " + cause.getMessage();
  }

  /** The term the elector has not yet ended; it may already be past its deadline. */
  Optional<Term> term() {
    return Optional.ofNullable(term);
  }

  /**
   * How long the store has failed without a success in between. A follower is told only of
   * failures, so a streak also ends when no failure came for {@code 2 × renewDeadline}: a failing
   * store fails every retry period plus a call timeout, both shorter than the renew deadline.
   */
  synchronized Duration failingFor(Duration renewDeadline) {
    if (failingSinceNanos == NONE) {
      return Duration.ZERO;
    }
    long now = System.nanoTime();
    if (now - lastFailureNanos > 2 * renewDeadline.toNanos()) {
      failingSinceNanos = NONE;
      return Duration.ZERO;
    }
    return Duration.ofNanos(now - failingSinceNanos);
  }

  Optional<String> lastError() {
    return Optional.ofNullable(lastError);
  }

  /**
   * Who leads, the token and the last renewal: this candidate's own while it leads, otherwise as
   * the store shows them (one read; a failed read is reported, not thrown).
   */
  Map<String, Object> describe(Elector elector, LeaseStore store) {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("name", elector.election());
    d.put("candidate", elector.candidate());
    d.put("leading", elector.isLeader());
    Optional<Term> leading = elector.currentTerm();
    if (leading.isPresent()) {
      d.put("leader", elector.candidate());
      d.put("token", leading.get().token().value());
      d.put("lastRenewal", lastConfirmed);
      return d;
    }
    try {
      Optional<LeaseRecord> record = store.read(elector.election());
      d.put("leader", record.map(LeaseRecord::holder).orElse(null));
      record.ifPresent(r -> d.put("token", r.token().value()));
      record.flatMap(LeaseRecord::renewedAt).ifPresent(at -> d.put("lastRenewal", at));
    } catch (RuntimeException e) {
      d.put("leader", elector.currentLeader().orElse(null));
      d.put("storeError", e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    return d;
  }
}
