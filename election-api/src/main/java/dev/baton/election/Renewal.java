package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * What became of one lease in {@link LeaseStore#renewAll}: the renewed lease, or the exception
 * {@link LeaseStore#renew} would have thrown for it ({@link LeaseLostException} when it is gone,
 * {@link LeaseStoreException} when the store could not say).
 */
public final class Renewal {

  private final Lease lease;
  private final RuntimeException failure;

  private Renewal(Lease lease, RuntimeException failure) {
    this.lease = lease;
    this.failure = failure;
  }

  public static Renewal renewed(Lease lease) {
    return new Renewal(requireNonNull(lease, "lease"), null);
  }

  public static Renewal failed(RuntimeException failure) {
    return new Renewal(null, requireNonNull(failure, "failure"));
  }

  public boolean isRenewed() {
    return lease != null;
  }

  /** The renewed lease; empty when the renewal failed. */
  public Optional<Lease> lease() {
    return Optional.ofNullable(lease);
  }

  /** Why the renewal failed; empty when it succeeded. */
  public Optional<RuntimeException> failure() {
    return Optional.ofNullable(failure);
  }

  /** The renewed lease, or the failure thrown: what {@link LeaseStore#renew} would have done. */
  public Lease leaseOrThrow() {
    if (failure != null) {
      throw failure;
    }
    return lease;
  }

  @Override
  public String toString() {
    return isRenewed() ? "renewed " + lease : "failed " + failure;
  }
}
