package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * The answer to {@link LeaseStore#tryAcquire}: either a {@link Lease} was granted, or somebody else
 * holds the election. Being refused is a normal answer, not an error.
 */
public final class Acquisition {

  private final Lease lease;
  private final LeaseRecord holder;

  private Acquisition(Lease lease, LeaseRecord holder) {
    this.lease = lease;
    this.holder = holder;
  }

  public static Acquisition granted(Lease lease) {
    return new Acquisition(requireNonNull(lease, "lease"), null);
  }

  /** Somebody else holds the election; {@code current} is what the store showed. */
  public static Acquisition held(LeaseRecord current) {
    return new Acquisition(null, requireNonNull(current, "current"));
  }

  public boolean isGranted() {
    return lease != null;
  }

  /** The granted lease; empty when the election is held by somebody else. */
  public Optional<Lease> lease() {
    return Optional.ofNullable(lease);
  }

  /** The current holder; empty when the lease was granted to the caller. */
  public Optional<LeaseRecord> holder() {
    return Optional.ofNullable(holder);
  }

  @Override
  public String toString() {
    return isGranted() ? "granted " + lease : "held " + holder;
  }
}
