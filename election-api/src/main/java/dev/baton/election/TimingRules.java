package dev.baton.election;

import java.time.Duration;
import java.util.Set;

/**
 * The rules of the timing triple, {@code leaseDuration > renewDeadline > retryPeriod × jitter > 0},
 * with messages that say which of the values were defaults: a user who set only {@code
 * election.lease-duration=5s} never wrote the 10 s the message complains about.
 */
final class TimingRules {

  private TimingRules() {}

  /**
   * @param set the keys ({@link ElectionProperties#LEASE_DURATION} and the like) of the values the
   *     user chose; the others are the defaults
   */
  static void check(
      Duration leaseDuration,
      Duration renewDeadline,
      Duration retryPeriod,
      double jitter,
      Set<String> set) {
    positive(ElectionProperties.LEASE_DURATION, "leaseDuration", leaseDuration);
    positive(ElectionProperties.RENEW_DEADLINE, "renewDeadline", renewDeadline);
    positive(ElectionProperties.RETRY_PERIOD, "retryPeriod", retryPeriod);
    if (renewDeadline.compareTo(leaseDuration) >= 0) {
      throw new ConfigurationException(
          "renewDeadline ("
              + ElectionProperties.RENEW_DEADLINE
              + ") must be shorter than leaseDuration ("
              + shown(ElectionProperties.LEASE_DURATION, leaseDuration, set)
              + "), but was "
              + shown(ElectionProperties.RENEW_DEADLINE, renewDeadline, set)
              + advice(set, ElectionProperties.LEASE_DURATION, ElectionProperties.RENEW_DEADLINE));
    }
    Duration jitteredRetry = Duration.ofNanos((long) (retryPeriod.toNanos() * jitter));
    if (jitteredRetry.compareTo(renewDeadline) >= 0) {
      throw new ConfigurationException(
          "retryPeriod ("
              + ElectionProperties.RETRY_PERIOD
              + ") × "
              + jitter
              + " must be shorter than renewDeadline ("
              + shown(ElectionProperties.RENEW_DEADLINE, renewDeadline, set)
              + "), but retryPeriod was "
              + shown(ElectionProperties.RETRY_PERIOD, retryPeriod, set)
              + advice(set, ElectionProperties.RENEW_DEADLINE, ElectionProperties.RETRY_PERIOD));
    }
  }

  private static void positive(String key, String field, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw new ConfigurationException(
          field + " (" + key + ") must be positive, but was " + Durations.format(d));
    }
  }

  private static String shown(String key, Duration value, Set<String> set) {
    return set.contains(key) ? Durations.format(value) : Durations.format(value) + ", the default";
  }

  /** When one side of a broken rule is a default, the fix is to set it too. */
  private static String advice(Set<String> set, String longer, String shorter) {
    for (String key : new String[] {longer, shorter}) {
      if (!set.contains(key)) {
        return "; set " + key + " as well";
      }
    }
    return "";
  }
}
