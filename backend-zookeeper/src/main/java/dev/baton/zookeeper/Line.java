package dev.baton.zookeeper;

import java.util.List;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/**
 * The candidates of one election in line, as one read of the election node's children showed them:
 * the first in line (the lowest sequence number) holds the lease.
 *
 * <p>Sequence numbers are handed out in the order ZooKeeper applies the creates, and a node once
 * created never moves up past another, so a member that is behind the quorum can only show nodes
 * that are gone already, never miss one that is still there: a candidate that reads itself first is
 * first.
 *
 * <p>A child named {@code lease} is the lease node of Baton releases before the line (one fixed
 * ephemeral node per election). It counts as first, so that a candidate of this release never takes
 * an election such a node holds; the reverse cannot be promised, so every candidate of an election
 * must run this release or a later one.
 *
 * @param first the first node's name, null when nobody is in line
 * @param second the next in line after it, null when there is none
 * @param election the election node's stat: its {@code mzxid} is the last grant that wrote
 */
record Line(String first, String second, Stat election) {

  static final String CANDIDATE_PREFIX = "c-";
  static final String EARLIER_LEASE_NODE = "lease";

  /** The line a read-only {@code multi} of the election node's children and data showed. */
  static Line of(List<OpResult> read, ElectionNodes nodes) throws KeeperException {
    OpResult children = read.get(0);
    if (children instanceof OpResult.ErrorResult) {
      int err = ((OpResult.ErrorResult) children).getErr();
      if (err == KeeperException.Code.NONODE.intValue()) {
        return new Line(null, null, null); // the election was never held
      }
      throw KeeperException.create(KeeperException.Code.get(err), nodes.electionPath());
    }
    NodeRead election = NodeRead.of(read.get(1), nodes.electionPath());
    return of(
        ((OpResult.GetChildrenResult) children).getChildren(),
        election == null ? null : election.stat());
  }

  /**
   * The line of {@code children}: the first two in line among them, each null when there is none.
   * An earlier release's lease node comes before every candidate.
   */
  static Line of(List<String> children, Stat election) {
    String first = null;
    String second = null;
    long lowest = Long.MAX_VALUE;
    long next = Long.MAX_VALUE;
    for (String child : children) {
      long sequence = child.equals(EARLIER_LEASE_NODE) ? -1 : sequence(child);
      if (sequence == -1 && !child.equals(EARLIER_LEASE_NODE)) {
        continue;
      }
      if (first == null || sequence < lowest) {
        second = first;
        next = lowest;
        first = child;
        lowest = sequence;
      } else if (second == null || sequence < next) {
        second = child;
        next = sequence;
      }
    }
    return new Line(first, second, election);
  }

  /**
   * Whether {@code node} was at least third in line: a change ahead of it can make it second, not
   * first, unless everyone ahead left together.
   */
  boolean farBehind(String node) {
    return first != null && second != null && !node.equals(first) && !node.equals(second);
  }

  /** The sequence number in a candidate's node name; -1 for a name that is not one. */
  static long sequence(String name) {
    if (!name.startsWith(CANDIDATE_PREFIX) || name.length() == CANDIDATE_PREFIX.length()) {
      return -1;
    }
    long sequence = 0;
    for (int i = CANDIDATE_PREFIX.length(); i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < '0' || c > '9' || sequence > Integer.MAX_VALUE) {
        return -1;
      }
      sequence = sequence * 10 + (c - '0');
    }
    return sequence;
  }

  /** The zxid of the last grant that wrote (a new term, or a grant that could not be a read). */
  long lastWrittenGrant() {
    return election == null ? 0 : election.getMzxid();
  }

  /**
   * Whether the first in line, whose node's stat this is, is granted on this read alone: its node's
   * zxid is above every grant that wrote, or it was created together with the election node and
   * neither has been written since, so there was no grant before. Otherwise the grant writes, for a
   * token above the last written one.
   */
  boolean grantsOnRead(Stat first) {
    return first.getMzxid() > lastWrittenGrant()
        || (election != null
            && first.getCzxid() == election.getCzxid()
            && first.getMzxid() == first.getCzxid()
            && election.getMzxid() == election.getCzxid());
  }
}
