package dev.baton.conformance;

import dev.baton.election.Term;
import dev.baton.election.TermWork;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Leader-only work as an application would write it: every tick, while its term is valid, it writes
 * to a {@link FencedRegister} with the term's token. Ticks run on the node's executor, so a stalled
 * node's ticks stall with it. It records starts, stops, ticks that found the term invalid, and
 * anything out of order.
 */
final class LeaderWork implements TermWork {

  private final String writer;
  private final FencedRegister register;
  private final ScheduledExecutorService ticker;
  private final Executor executor;
  private final Duration period;
  private final History history;
  private final List<Term> started = new CopyOnWriteArrayList<>();
  private final List<Term> stopped = new CopyOnWriteArrayList<>();
  private final List<String> anomalies = new CopyOnWriteArrayList<>();
  private final AtomicInteger skippedTicks = new AtomicInteger();

  LeaderWork(
      String writer,
      FencedRegister register,
      ScheduledExecutorService ticker,
      Executor executor,
      Duration period,
      History history) {
    this.writer = writer;
    this.history = history;
    this.register = register;
    this.ticker = ticker;
    this.executor = executor;
    this.period = period;
  }

  @Override
  public AutoCloseable start(Term term) {
    if (started.size() != stopped.size()) {
      anomalies.add(
          "work for token "
              + term.token()
              + " started while the work of token "
              + started.get(started.size() - 1).token()
              + " still ran");
    }
    started.add(term);
    ScheduledFuture<?> ticks =
        ticker.scheduleAtFixedRate(
            () -> executor.execute(() -> tick(term)), 0, period.toNanos(), TimeUnit.NANOSECONDS);
    return () -> {
      ticks.cancel(false);
      if (!term.isEnded() || term.isValid()) {
        anomalies.add(
            "work for token " + term.token() + " was stopped while its term had not ended");
      }
      stopped.add(term);
      history.recordWorkStopped(term.election(), term.candidate(), term.token());
    };
  }

  private void tick(Term term) {
    if (term.isValid()) {
      register.write(writer, term.token());
    } else {
      skippedTicks.incrementAndGet();
    }
  }

  List<Term> started() {
    return List.copyOf(started);
  }

  List<Term> stopped() {
    return List.copyOf(stopped);
  }

  List<String> anomalies() {
    return List.copyOf(anomalies);
  }

  /** Ticks that ran after their term stopped being valid, and so did nothing. */
  int skippedTicks() {
    return skippedTicks.get();
  }
}
