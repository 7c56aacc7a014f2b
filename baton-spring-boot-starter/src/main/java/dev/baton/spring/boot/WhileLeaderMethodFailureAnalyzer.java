package dev.baton.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Shows which {@link WhileLeader} method cannot run and what to change, instead of a bean-creation
 * stack.
 */
final class WhileLeaderMethodFailureAnalyzer
    extends AbstractFailureAnalyzer<InvalidWhileLeaderMethodException> {

  @Override
  protected FailureAnalysis analyze(
      Throwable rootFailure, InvalidWhileLeaderMethodException cause) {
    return new FailureAnalysis(cause.problem + ".", cause.action, cause);
  }
}
