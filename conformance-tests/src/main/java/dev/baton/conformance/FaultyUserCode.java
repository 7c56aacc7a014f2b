package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import dev.baton.election.ElectionListener;
import dev.baton.election.Term;
import dev.baton.election.TermWork;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Leader work, or a listener, that misbehaves as application code does: it takes a long time to
 * stop, or throws an {@link Error} (not an exception) once. Install it with {@code whileLeader} for
 * the work faults and with {@code listener} for the listener fault. It records when each term's
 * work started and stopped, the stops also in the {@link History}.
 */
final class FaultyUserCode implements TermWork, ElectionListener {

  /** What goes wrong. Each Error is thrown once, on the first occasion; later terms behave. */
  enum Fault {
    /** Stopping the work takes {@code stopTime}. */
    SLOW_STOP,
    /** {@code TermWork.start} throws an Error. */
    ERROR_ON_START,
    /** What {@code TermWork.start} returned throws an Error when closed. */
    ERROR_ON_STOP,
    /** The listener's {@code onElected} and {@code onRevoked} throw an Error. */
    ERROR_IN_LISTENER
  }

  /** An Error no elector can mistake for one of its own, and that says where it came from. */
  static final class PlantedError extends Error {
    PlantedError(String message) {
      super(message);
    }
  }

  private final Fault fault;
  private final Duration stopTime;
  private final History history;
  private final AtomicBoolean thrown = new AtomicBoolean();
  private final AtomicBoolean revokeThrown = new AtomicBoolean();
  private final List<Term> started = new CopyOnWriteArrayList<>();
  private final Map<Term, Long> stoppedAt = new ConcurrentHashMap<>();

  private FaultyUserCode(Fault fault, Duration stopTime, History history) {
    this.fault = fault;
    this.stopTime = stopTime;
    this.history = history;
  }

  static FaultyUserCode slowToStop(Duration stopTime, History history) {
    return new FaultyUserCode(
        Fault.SLOW_STOP, requireNonNull(stopTime, "stopTime"), requireNonNull(history, "history"));
  }

  static FaultyUserCode throwing(Fault fault, History history) {
    if (fault == Fault.SLOW_STOP) {
      throw new IllegalArgumentException("use slowToStop for " + fault);
    }
    return new FaultyUserCode(fault, Duration.ZERO, requireNonNull(history, "history"));
  }

  Fault fault() {
    return fault;
  }

  @Override
  public AutoCloseable start(Term term) {
    if (fault == Fault.ERROR_ON_START && thrown.compareAndSet(false, true)) {
      throw new PlantedError(
          "planted by the conformance suite: TermWork.start failed for token " + term.token());
    }
    started.add(term);
    return () -> {
      if (fault == Fault.SLOW_STOP) {
        // Work that winds down for a while (flushes, drains a queue): the elector must wait for it.
        long until = System.nanoTime() + stopTime.toNanos();
        for (long left; (left = until - System.nanoTime()) > 0; ) {
          LockSupport.parkNanos(left);
        }
      }
      stopped(term);
      if (fault == Fault.ERROR_ON_STOP && thrown.compareAndSet(false, true)) {
        throw new PlantedError(
            "planted by the conformance suite: stopping the work of token "
                + term.token()
                + " failed");
      }
    };
  }

  @Override
  public void onElected(Term term) {
    started.add(term);
    if (fault == Fault.ERROR_IN_LISTENER && thrown.compareAndSet(false, true)) {
      throw new PlantedError(
          "planted by the conformance suite: onElected failed for token " + term.token());
    }
  }

  @Override
  public void onRevoked(Term term) {
    stopped(term);
    if (fault == Fault.ERROR_IN_LISTENER && revokeThrown.compareAndSet(false, true)) {
      throw new PlantedError(
          "planted by the conformance suite: onRevoked failed for token " + term.token());
    }
  }

  private void stopped(Term term) {
    stoppedAt.put(term, System.nanoTime());
    history.recordWorkStopped(term.election(), term.candidate(), term.token());
  }

  /** Terms whose work started (or, for a listener, whose onElected came), in order. */
  List<Term> started() {
    return List.copyOf(started);
  }

  /** When the work of {@code term} stopped (or its onRevoked came), once it did. */
  Optional<Long> stoppedAt(Term term) {
    return Optional.ofNullable(stoppedAt.get(term));
  }
}
