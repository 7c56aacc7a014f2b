package dev.baton.zookeeper;

import dev.baton.election.ConfigurationException;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.common.PathUtils;

/**
 * The nodes of one election: a persistent election node, and under it one ephemeral sequential node
 * per candidate in line, named {@code c-<sequence>} and holding the candidate's id. The first in
 * line holds the lease ({@link Line}).
 *
 * <p>Paths come twice: relative to the Curator client's namespace (for Curator's own calls) and as
 * the ZooKeeper handle sees them (for the raw calls that must stay in one session).
 */
record ElectionNodes(String election, String electionPath, String rawElectionPath) {

  /** Built once per election and kept by the store ({@link ZooKeeperLeaseStore#nodes}). */
  static ElectionNodes of(String basePath, String namespace, String election) {
    String electionPath = checkedPath(basePath, election);
    if (namespace == null || namespace.isEmpty()) {
      return new ElectionNodes(election, electionPath, electionPath);
    }
    return new ElectionNodes(
        election, electionPath, ZKPaths.fixForNamespace(namespace, electionPath));
  }

  /** A child of the election node, as the ZooKeeper handle sees it. */
  String rawChild(String name) {
    return rawElectionPath + ZKPaths.PATH_SEPARATOR + name;
  }

  /** A child of the election node, as Curator and messages name it. */
  String child(String name) {
    return electionPath + ZKPaths.PATH_SEPARATOR + name;
  }

  /** What a candidate's node is created as: ZooKeeper appends the sequence number. */
  String rawCandidatePrefix() {
    return rawChild(Line.CANDIDATE_PREFIX);
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
