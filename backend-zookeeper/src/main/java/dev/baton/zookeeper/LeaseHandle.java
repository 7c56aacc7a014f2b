package dev.baton.zookeeper;

import dev.baton.election.Lease;

/**
 * What {@link Lease#handle()} carries for a ZooKeeper lease: the session that owns the lease node
 * and the version the election node got from the grant.
 *
 * <p>The version is what makes release and guarded writes exact. Data versions of the lease node
 * itself start at 0 for every new node, so "delete if version is 0" could delete a successor's
 * node; the election node is never deleted and every grant bumps its version, so "election node
 * still at the version of my grant, and a lease node exists" can only mean my lease node.
 *
 * @param sessionId the ZooKeeper session that owns the ephemeral lease node
 * @param electionVersion the election node's data version right after the grant
 */
record LeaseHandle(long sessionId, int electionVersion) {

  static LeaseHandle of(Lease lease) {
    String handle = lease.handle();
    int slash = handle.indexOf('/');
    try {
      if (slash > 0) {
        return new LeaseHandle(
            Long.parseUnsignedLong(handle.substring(0, slash), 16),
            Integer.parseInt(handle.substring(slash + 1)));
      }
    } catch (NumberFormatException e) {
      // reported below, with the lease it came from
    }
    throw new IllegalArgumentException(
        "lease of candidate '"
            + lease.candidate()
            + "' in election '"
            + lease.election()
            + "' was not granted by a ZooKeeper lease store: its handle is '"
            + handle
            + "', expected <session id in hex>/<election node version>");
  }

  String encode() {
    return Long.toHexString(sessionId) + "/" + electionVersion;
  }

  static String sessionText(long sessionId) {
    return "0x" + Long.toHexString(sessionId);
  }
}
