package dev.baton.spring.boot;

import dev.baton.election.ConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Shows Baton's own message, which names the key, the value and what is accepted, instead of a
 * bean-creation stack.
 */
final class ElectionConfigurationFailureAnalyzer
    extends AbstractFailureAnalyzer<ConfigurationException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, ConfigurationException cause) {
    return new FailureAnalysis(
        "Baton's election configuration is invalid: " + cause.getMessage(),
        "Correct the election.* property named above (application properties, or the ELECTION_* environment variable), or set election.enabled=false.",
        cause);
  }
}
