package dev.baton.zookeeper;

import dev.baton.election.ConfigurationException;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.common.PathUtils;

/**
 * The two nodes of one election: a persistent election node whose data version counts the grants,
 * and under it the ephemeral lease node whose data is the holder's candidate id.
 *
 * <p>Paths come twice: relative to the Curator client's namespace (for Curator's own calls) and as
 * the ZooKeeper handle sees them (for the raw calls that must stay in one session).
 */
record ElectionNodes(
    String election,
    String electionPath,
    String leasePath,
    String rawElectionPath,
    String rawLeasePath) {

  static final String LEASE_NODE = "lease";

  /** Built once per election and kept by the store ({@link ZooKeeperLeaseStore#nodes}). */
  static ElectionNodes of(String basePath, String namespace, String election) {
    String electionPath = checkedPath(basePath, election);
    String leasePath = electionPath + ZKPaths.PATH_SEPARATOR + LEASE_NODE;
    if (namespace == null || namespace.isEmpty()) {
      return new ElectionNodes(election, electionPath, leasePath, electionPath, leasePath);
    }
    String rawElectionPath = ZKPaths.fixForNamespace(namespace, electionPath);
    return new ElectionNodes(
        election,
        electionPath,
        leasePath,
        rawElectionPath,
        rawElectionPath + ZKPaths.PATH_SEPARATOR + LEASE_NODE);
  }

  /** Throws IllegalArgumentException naming the path when it cannot be a base path. */
  static void checkBasePath(String basePath) {
    try {
      PathUtils.validatePath(basePath);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "'"
              + basePath
              + "' is not a ZooKeeper path ("
              + e.getMessage()
              + "); use an absolute path such as "
              + ZooKeeperLeaseStore.DEFAULT_BASE_PATH,
          e);
    }
  }

  /** The election node's path; throws ConfigurationException when the name cannot be a node's. */
  private static String checkedPath(String basePath, String election) {
    String problem = null;
    String path = null;
    if (election.isEmpty()) {
      problem = "it is empty";
    } else if (election.indexOf('/') >= 0) {
      problem = "it contains '/'";
    } else if (election.equals(".") || election.equals("..")) {
      problem = "'.' and '..' are reserved";
    } else {
      path = ZKPaths.makePath(basePath, election);
      try {
        PathUtils.validatePath(path);
      } catch (IllegalArgumentException e) {
        problem = e.getMessage();
      }
    }
    if (problem != null) {
      throw new ConfigurationException(
          "election name '"
              + election
              + "' cannot be a ZooKeeper node name: "
              + problem
              + "; use a non-empty name without '/' and without control or private-use characters");
    }
    return path;
  }
}
