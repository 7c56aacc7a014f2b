package dev.baton.election;

/**
 * The store could not answer: connection lost, timed out, credentials refused, table missing.
 * Whether the lease is still held is unknown; the Elector keeps leading only until its renew
 * deadline passes.
 */
public class LeaseStoreException extends ElectionException {

  public LeaseStoreException(String election, String message, Throwable cause) {
    super(election, message, cause);
  }

  public LeaseStoreException(String election, String message) {
    super(election, message, null);
  }
}
