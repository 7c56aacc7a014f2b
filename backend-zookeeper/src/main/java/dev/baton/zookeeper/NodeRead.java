package dev.baton.zookeeper;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/** A node's data and stat as one read returned them. */
record NodeRead(byte[] data, Stat stat) {

  NodeRead {
    data = data == null ? new byte[0] : data;
  }

  /** The node one read of a read-only {@code multi} returned; null when it does not exist. */
  static NodeRead of(OpResult result, String path) throws KeeperException {
    if (result instanceof OpResult.GetDataResult) {
      OpResult.GetDataResult read = (OpResult.GetDataResult) result;
      return new NodeRead(read.getData(), read.getStat());
    }
    int err = ((OpResult.ErrorResult) result).getErr();
    if (err == KeeperException.Code.NONODE.intValue()) {
      return null;
    }
    throw KeeperException.create(KeeperException.Code.get(err), path);
  }
}
