package dev.baton.election;

import java.util.Optional;

/**
 * Told of leadership changes. Calls come off the renewal path, one at a time and in order, after
 * the store confirmed the change: every {@code onElected} is followed by exactly one {@code
 * onRevoked} for the same term before the next {@code onElected}. A listener that throws is logged
 * and the others still run. A slow listener delays later callbacks, never a renewal.
 */
public interface ElectionListener {

  /** This node leads now, for {@code term}. */
  default void onElected(Term term) {}

  /** This node no longer leads for {@code term}; its work must stop. */
  default void onRevoked(Term term) {}

  /** The holder this node knows of changed; empty when it knows of none. */
  default void onLeaderChanged(Optional<String> leader) {}
}
