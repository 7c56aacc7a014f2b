package dev.baton.election;

import java.util.Optional;

/**
 * A renewal found that the lease is no longer the caller's: it expired, was released, or another
 * candidate holds it now. The store's answer was definite; compare {@link LeaseStoreException},
 * where the store could not answer.
 */
public class LeaseLostException extends ElectionException {

  private final String holder;

  public LeaseLostException(String election, String message, String holder) {
    super(election, message);
    this.holder = holder;
  }

  /** The holder the store showed instead, when it said. */
  public Optional<String> holder() {
    return Optional.ofNullable(holder);
  }
}
