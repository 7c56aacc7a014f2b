package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * The elector timings the scenarios run with, and how much lateness a busy machine is allowed.
 *
 * @param leaseDuration the lease every elector asks for
 * @param renewDeadline how long a leader goes on without a confirmed renewal
 * @param retryPeriod how often leaders renew and polling followers try
 * @param allowance how much later than the contract's bound an event may come before a scenario
 *     fails (thread scheduling and garbage collection on a shared CI machine); it widens upper
 *     bounds only, never the safety checks
 */
public record Timings(
    Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, Duration allowance) {

  /** Lease 3 s, renew deadline 2 s, retry 500 ms, allowance 3 s: the default for every backend. */
  public static final Timings SHORT =
      new Timings(
          Duration.ofSeconds(3),
          Duration.ofSeconds(2),
          Duration.ofMillis(500),
          Duration.ofSeconds(3));

  public Timings {
    requireNonNull(leaseDuration, "leaseDuration");
    requireNonNull(renewDeadline, "renewDeadline");
    requireNonNull(retryPeriod, "retryPeriod");
    requireNonNull(allowance, "allowance");
    if (retryPeriod.isNegative() || retryPeriod.isZero() || allowance.isNegative()) {
      throw new IllegalArgumentException(
          "retryPeriod must be positive and allowance not negative, but were "
              + retryPeriod
              + " and "
              + allowance);
    }
    if (renewDeadline.compareTo(leaseDuration) >= 0 || retryPeriod.compareTo(renewDeadline) >= 0) {
      throw new IllegalArgumentException(
          "timings must satisfy leaseDuration > renewDeadline > retryPeriod, but were "
              + leaseDuration
              + " / "
              + renewDeadline
              + " / "
              + retryPeriod);
    }
  }

  public Timings withRetryPeriod(Duration retryPeriod) {
    return new Timings(leaseDuration, renewDeadline, retryPeriod, allowance);
  }

  public Timings withAllowance(Duration allowance) {
    return new Timings(leaseDuration, renewDeadline, retryPeriod, allowance);
  }

  /** The longest a scenario waits for anything: three leases and ten seconds. */
  public Duration patience() {
    return leaseDuration.multipliedBy(3).plusSeconds(10);
  }
}
