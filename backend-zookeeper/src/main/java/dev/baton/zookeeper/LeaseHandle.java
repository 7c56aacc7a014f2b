package dev.baton.zookeeper;

import dev.baton.election.Lease;

/**
 * What {@link Lease#handle()} carries for a ZooKeeper lease: the session that owns the candidate's
 * node, the node's name, and the node's data version at the grant.
 *
 * <p>The version is what makes release and guarded writes exact: a new term of the same candidate
 * writes the node, so "delete if still at my version" never removes a later term's lease.
 *
 * @param sessionId the ZooKeeper session that owns the ephemeral node
 * @param node the node's name under the election node
 * @param version the node's data version right after the grant
 */
record LeaseHandle(long sessionId, String node, int version) {

  static LeaseHandle of(Lease lease) {
    String handle = lease.handle();
    int first = handle.indexOf('/');
    int last = handle.lastIndexOf('/');
    try {
      if (first > 0 && last > first + 1) {
        String node = handle.substring(first + 1, last);
        if (Line.sequence(node) >= 0) {
          return new LeaseHandle(
              Long.parseUnsignedLong(handle.substring(0, first), 16),
              node,
              Integer.parseInt(handle.substring(last + 1)));
        }
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
            + "', expected <session id in hex>/<node name>/<node version>");
  }

  String encode() {
    return Long.toHexString(sessionId) + "/" + node + "/" + version;
  }

  static String sessionText(long sessionId) {
    return "0x" + Long.toHexString(sessionId);
  }
}
