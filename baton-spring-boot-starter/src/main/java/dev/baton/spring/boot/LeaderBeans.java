package dev.baton.spring.boot;

import dev.baton.election.ElectionListener;
import dev.baton.election.Term;
import dev.baton.election.TermWork;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The application's {@link TermWork} and {@link ElectionListener} beans and its {@link WhileLeader}
 * methods, looked up when a term starts rather than when the elector is built, so that such a bean
 * may itself depend on the {@code Elector} (to step down, say) without a cycle.
 */
final class LeaderBeans implements TermWork, ElectionListener {

  private final ObjectProvider<TermWork> work;
  private final ObjectProvider<ElectionListener> listeners;
  private final TermWork methods;

  LeaderBeans(
      ObjectProvider<TermWork> work, ObjectProvider<ElectionListener> listeners, TermWork methods) {
    this.work = work;
    this.listeners = listeners;
    this.methods = methods;
  }

  /** Starts every work bean, then the @WhileLeader methods, as {@link #startAll} does. */
  @Override
  public AutoCloseable start(Term term) throws Exception {
    List<TermWork> all = new ArrayList<>(work.orderedStream().toList());
    all.add(methods);
    return startAll(all, term);
  }

  /**
   * Starts each for the term in order; if one fails, stops those already started and fails the
   * term.
   */
  static AutoCloseable startAll(List<? extends TermWork> work, Term term) throws Exception {
    List<AutoCloseable> started = new ArrayList<>();
    try {
      for (TermWork w : work) {
        started.add(w.start(term));
      }
    } catch (Exception | Error e) {
      closeAll(started, e);
      throw e;
    }
    return () -> closeAll(started, null);
  }

  /**
   * Stops in reverse order of starting, every one even when one fails, with an Error too: the lease
   * is released once this returns, and a piece of work left running would then overlap the next
   * leader's.
   */
  private static void closeAll(List<AutoCloseable> started, Throwable failure) throws Exception {
    Throwable first = null;
    for (int i = started.size() - 1; i >= 0; i--) {
      AutoCloseable c = started.get(i);
      if (c == null) {
        continue;
      }
      try {
        c.close();
      } catch (Exception | Error e) {
        if (failure != null) {
          failure.addSuppressed(e);
        } else {
          first = together(first, e);
        }
      }
    }
    if (first instanceof Error error) {
      throw error;
    }
    if (first != null) {
      throw (Exception) first;
    }
  }

  /** {@code e} added to what failed first, or first itself when nothing failed before it. */
  private static Throwable together(Throwable first, Throwable e) {
    if (first == null) {
      return e;
    }
    first.addSuppressed(e);
    return first;
  }

  @Override
  public void onElected(Term term) {
    tellEach(l -> l.onElected(term));
  }

  @Override
  public void onRevoked(Term term) {
    tellEach(l -> l.onRevoked(term));
  }

  @Override
  public void onLeaderChanged(Optional<String> leader) {
    tellEach(l -> l.onLeaderChanged(leader));
  }

  /**
   * Tells every listener bean, each even when one before it throws, as the elector does for its own
   * listeners (it sees only this one); then throws what the first one threw, for the elector to
   * log, or to act on when it is a {@link dev.baton.election.WorkFailedException}.
   */
  private void tellEach(Consumer<ElectionListener> event) {
    Throwable first = null;
    for (ElectionListener l : listeners.orderedStream().toList()) {
      try {
        event.accept(l);
      } catch (RuntimeException | Error e) {
        first = together(first, e);
      }
    }
    if (first instanceof Error error) {
      throw error;
    }
    if (first != null) {
      throw (RuntimeException) first;
    }
  }
}
