package dev.baton.etcd;

/**
 * etcd answered that a shared lease does not exist: it expired or was revoked, and every key that
 * was attached to it is gone. Internal; callers see {@link dev.baton.election.LeaseLostException}.
 */
final class LeaseGoneException extends RuntimeException {

  LeaseGoneException(long leaseId) {
    super(
        "etcd lease " + Long.toHexString(leaseId) + " not found (expired or revoked)",
        null,
        false,
        false);
  }
}
