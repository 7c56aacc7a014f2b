package dev.baton.spring.boot;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The starter's own keys under {@code election.}, which Baton does not read outside Spring. Every
 * other {@code election.*} key is Baton's: the starter reads them from Spring's Environment and
 * hands them to {@link dev.baton.election.ElectionProperties}, which applies the same defaults,
 * checks and messages as outside Spring (see {@link EnvironmentElectionProperties}).
 *
 * @param enabled whether to configure a store and an elector at all
 * @param metrics what the Micrometer meters look like
 */
@ConfigurationProperties("election")
public record BatonProperties(
    @DefaultValue("true") boolean enabled, @DefaultValue Metrics metrics) {

  /**
   * @param clientGoStatus also export the leader gauge as client-go's leader_election_master_status
   */
  public record Metrics(@DefaultValue("false") boolean clientGoStatus) {}
}
