package dev.baton.election;

/**
 * Leader-only work scoped to a term, for {@link ElectorBuilder#whileLeader}: started with each new
 * term, stopped when that term ends, started afresh with the next one.
 */
@FunctionalInterface
public interface TermWork {

  /**
   * Starts the work for {@code term} and returns what stops it. Must not block for long: start
   * threads or informers and return. If it throws, the elector steps down so another candidate can
   * try.
   */
  AutoCloseable start(Term term) throws Exception;
}
