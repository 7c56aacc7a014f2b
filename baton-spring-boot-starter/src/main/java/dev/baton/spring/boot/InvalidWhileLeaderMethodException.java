package dev.baton.spring.boot;

/**
 * A {@link WhileLeader} method that cannot run: what is wrong, naming the bean and the method, and
 * what to do.
 */
final class InvalidWhileLeaderMethodException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  final String problem;
  final String action;

  InvalidWhileLeaderMethodException(String problem, String action) {
    super(problem + ". " + action);
    this.problem = problem;
    this.action = action;
  }
}
