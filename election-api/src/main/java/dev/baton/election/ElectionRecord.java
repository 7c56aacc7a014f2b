package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.time.Instant;

/**
 * The record a compare-and-set store keeps for an election, with the fields client-go's {@code
 * LeaderElectionRecord} has, so that Baton and client-go candidates can share one record.
 *
 * @param holder the holder's candidate id; empty when released
 * @param leaseDuration how long followers wait, from when they see the record last change, before
 *     they may take it over; written by the holder and honoured by every reader
 * @param acquireTime wall time of the grant, for humans only
 * @param renewTime wall time of the last renewal, for humans only
 * @param transitions how many times the election changed hands; the fencing token
 */
public record ElectionRecord(
    String holder,
    Duration leaseDuration,
    Instant acquireTime,
    Instant renewTime,
    long transitions) {

  public ElectionRecord {
    requireNonNull(holder, "holder");
    requireNonNull(leaseDuration, "leaseDuration");
    requireNonNull(acquireTime, "acquireTime");
    requireNonNull(renewTime, "renewTime");
  }

  public boolean isReleased() {
    return holder.isEmpty();
  }
}
