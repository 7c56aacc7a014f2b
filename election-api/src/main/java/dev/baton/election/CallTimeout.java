package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * The one rule every backend applies to its call timeout, the longest one remote call may take:
 * more than zero and at most half the renew deadline. Half, as client-go sets its client timeout,
 * so that a leader whose first renewal hangs still has time for a second one before it must step
 * down.
 *
 * <p>Unless set, the call timeout is half the renew deadline but at most {@link #DEFAULT} (3 s):
 * with the default renew deadline of 10 s that leaves room for three renewals that time out, and a
 * short renew deadline never needs a call timeout of its own.
 */
public final class CallTimeout {

  /** The call timeout of a store built without one, and the most the derived default gives. */
  public static final Duration DEFAULT = Duration.ofSeconds(3);

  /** The Elector's default renew deadline, for configuration that does not set its own. */
  static final Duration DEFAULT_RENEW_DEADLINE = Duration.ofSeconds(10);

  private static final String RULE = "more than 0 and at most half the renew deadline";

  private CallTimeout() {}

  /** The call timeout used when none is set: half of {@code renewDeadline}, at most 3 s. */
  public static Duration defaultFor(Duration renewDeadline) {
    requireNonNull(renewDeadline, "renewDeadline");
    Duration half = renewDeadline.dividedBy(2);
    return half.compareTo(DEFAULT) < 0 ? half : DEFAULT;
  }

  /**
   * Checks a call timeout given to a store's builder, which does not know the renew deadline it
   * will be used with: it must be positive.
   *
   * @throws ConfigurationException naming {@code key}, the value and the rule
   */
  public static Duration check(String key, Duration callTimeout) {
    requireNonNull(key, "key");
    requireNonNull(callTimeout, key);
    if (callTimeout.isNegative() || callTimeout.isZero()) {
      throw new ConfigurationException(
          key
              + ": "
              + Durations.format(callTimeout.abs())
              + (callTimeout.isNegative() ? " (negative)" : "")
              + " must be "
              + RULE
              + " it is used with (default "
              + Durations.format(DEFAULT)
              + ")");
    }
    return callTimeout;
  }

  /**
   * Checks a call timeout against the renew deadline it is used with.
   *
   * @throws ConfigurationException naming {@code key}, the value and the rule
   */
  public static Duration check(String key, Duration callTimeout, Duration renewDeadline) {
    check(key, callTimeout);
    requireNonNull(renewDeadline, "renewDeadline");
    if (callTimeout.multipliedBy(2).compareTo(renewDeadline) > 0) {
      throw new ConfigurationException(
          key
              + ": "
              + Durations.format(callTimeout)
              + " must be "
              + RULE
              + " ("
              + ElectionProperties.RENEW_DEADLINE
              + " is "
              + Durations.format(renewDeadline)
              + ", so at most "
              + Durations.format(renewDeadline.dividedBy(2))
              + "), so that a leader whose store stops answering can try again before it must step down;"
              + " leave it unset for the default, half the renew deadline up to "
              + Durations.format(DEFAULT));
    }
    return callTimeout;
  }

  /**
   * Reads a backend's call timeout from {@code key}, checked against {@code
   * election.renew-deadline} (default 10 s); when {@code key} is unset, {@link #defaultFor} the
   * renew deadline.
   *
   * @throws ConfigurationException naming {@code key}, the value and the rule
   */
  public static Duration read(ElectionProperties properties, String key) {
    requireNonNull(properties, "properties");
    requireNonNull(key, "key");
    Duration renewDeadline =
        properties.duration(ElectionProperties.RENEW_DEADLINE, DEFAULT_RENEW_DEADLINE);
    return properties
        .duration(key)
        .map(t -> check(key, t, renewDeadline))
        .orElseGet(() -> defaultFor(renewDeadline));
  }
}
