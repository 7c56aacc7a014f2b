package dev.baton.election;

import static java.util.Objects.requireNonNull;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Starts and stops a {@link TermWork} with the terms; confined to the callback executor. */
final class TermScopedWork implements ElectionListener {
  private static final Logger log = LoggerFactory.getLogger(TermScopedWork.class);

  private final TermWork work;
  private AutoCloseable running;
  private Term runningTerm;

  TermScopedWork(TermWork work) {
    this.work = work;
  }

  @Override
  public void onElected(Term term) {
    if (term.isEnded()) {
      return;
    }
    try {
      running = requireNonNull(work.start(term), "TermWork.start must return what stops the work");
      runningTerm = term;
    } catch (Exception | Error e) {
      // An Error too (an AssertionError, a class that cannot load): the term is given up either
      // way.
      log.error(
          "election '{}' candidate '{}': leader work failed to start for token {}; the term is given up",
          term.election(),
          term.candidate(),
          term.token(),
          e);
      throw new WorkFailedException(term, e);
    }
  }

  @Override
  public void onRevoked(Term term) {
    if (runningTerm != term || running == null) {
      return;
    }
    AutoCloseable stop = running;
    running = null;
    runningTerm = null;
    try {
      stop.close();
    } catch (Exception | Error e) {
      log.warn(
          "election '{}' candidate '{}': stopping leader work of token {} failed",
          term.election(),
          term.candidate(),
          term.token(),
          e);
    }
  }
}
