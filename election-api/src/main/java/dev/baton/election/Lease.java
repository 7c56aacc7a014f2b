package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * A grant of an election to one candidate, as confirmed by a {@link LeaseStore}.
 *
 * @param election the election's name
 * @param candidate the candidate that holds it
 * @param token the fencing token of this grant; renewals keep it
 * @param ttl the time-to-live the store really applies, which may be longer than the one asked for
 *     (a ZooKeeper server clamps session timeouts, etcd counts whole seconds)
 * @param handle opaque to everyone but the store that issued it: whatever that store needs to renew
 *     or release this grant (a resourceVersion, a lease id). Empty when it needs nothing.
 */
public record Lease(
    String election, String candidate, FencingToken token, Duration ttl, String handle) {

  public Lease {
    requireNonNull(election, "election");
    requireNonNull(candidate, "candidate");
    requireNonNull(token, "token");
    requireNonNull(ttl, "ttl");
    requireNonNull(handle, "handle");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive, but was " + ttl);
    }
  }

  /** The same grant with a new handle and effective TTL, as a renewal returns it. */
  public Lease renewed(Duration effectiveTtl, String newHandle) {
    return new Lease(election, candidate, token, effectiveTtl, newHandle);
  }
}
