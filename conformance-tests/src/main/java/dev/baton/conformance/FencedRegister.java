package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import dev.baton.election.FencingToken;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A shared resource that fences its writers, as a leader's downstream system should: it accepts a
 * write only with a token at least as high as the highest it has accepted, and refuses (and
 * remembers) older ones. Thread-safe.
 */
public final class FencedRegister {

  /**
   * One write attempt: who, with which token, when ({@link System#nanoTime()}), and whether it was
   * taken.
   */
  public record Write(String writer, FencingToken token, long atNanos, boolean accepted) {}

  private final List<Write> writes = new ArrayList<>();
  private FencingToken highest;

  /**
   * Writes on behalf of {@code writer} holding {@code token}; false when an older token was
   * refused.
   */
  public synchronized boolean write(String writer, FencingToken token) {
    requireNonNull(writer, "writer");
    requireNonNull(token, "token");
    boolean accepted = highest == null || token.compareTo(highest) >= 0;
    if (accepted) {
      highest = token;
    }
    writes.add(new Write(writer, token, System.nanoTime(), accepted));
    return accepted;
  }

  public synchronized Optional<FencingToken> highest() {
    return Optional.ofNullable(highest);
  }

  public synchronized List<Write> accepted() {
    return writes.stream().filter(Write::accepted).toList();
  }

  public synchronized List<Write> refused() {
    return writes.stream().filter(w -> !w.accepted()).toList();
  }

  /** Writes by {@code writer}, accepted or not, in order. */
  public synchronized List<Write> writesBy(String writer) {
    return writes.stream().filter(w -> w.writer().equals(writer)).toList();
  }
}
