package dev.baton.zookeeper;

import java.util.List;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/**
 * The results of a {@code multi}. For a failed write, which operation failed and why; the others
 * report OK (before it) or RUNTIMEINCONSISTENCY (after it).
 *
 * @param failedAt the index of the operation that failed, or -1 when all succeeded
 */
record MultiAnswer(Code code, List<OpResult> results, int failedAt) {

  static MultiAnswer of(int rc, List<OpResult> results) {
    for (int i = 0; i < results.size(); i++) {
      if (results.get(i) instanceof OpResult.ErrorResult) {
        int err = ((OpResult.ErrorResult) results.get(i)).getErr();
        if (err != Code.OK.intValue() && err != Code.RUNTIMEINCONSISTENCY.intValue()) {
          return new MultiAnswer(Code.get(err), results, i);
        }
      }
    }
    return new MultiAnswer(Code.get(rc), results, -1);
  }

  boolean succeeded() {
    return failedAt < 0;
  }

  /** The stat of the first node a successful {@code multi} wrote with setData. */
  Stat firstWritten() {
    for (OpResult result : results) {
      if (result instanceof OpResult.SetDataResult) {
        return ((OpResult.SetDataResult) result).getStat();
      }
    }
    throw new IllegalStateException("no setData among: " + results);
  }
}
