package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What a store shows for an election that somebody holds: for followers, status displays and
 * decisions about when to try again. It is a snapshot; by the time it is read it may be stale.
 *
 * @param election the election's name
 * @param holder the candidate id of the current holder
 * @param token the holder's fencing token
 * @param ttl the holder's time-to-live as the store records it
 * @param renewedAt the store's own wall-clock time of the last grant or renewal, for humans only
 *     (never compare it with a local clock); empty when the store does not record it
 * @param expiresIn how long, as the store judged it at the time of the read, until the lease
 *     expires if its holder stops renewing now; empty when the store cannot tell cheaply
 */
public record LeaseRecord(
    String election,
    String holder,
    FencingToken token,
    Duration ttl,
    Optional<Instant> renewedAt,
    Optional<Duration> expiresIn) {

  public LeaseRecord {
    requireNonNull(election, "election");
    requireNonNull(holder, "holder");
    requireNonNull(token, "token");
    requireNonNull(ttl, "ttl");
    requireNonNull(renewedAt, "renewedAt");
    requireNonNull(expiresIn, "expiresIn");
  }
}
