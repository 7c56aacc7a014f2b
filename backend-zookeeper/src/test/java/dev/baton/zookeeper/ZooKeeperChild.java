package dev.baton.zookeeper;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.QuorumConfigBuilder;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.TestingZooKeeperServer;

/**
 * A ZooKeeper server in a process of its own, so that a test can freeze it with SIGSTOP: a
 * standalone server, or one member of an ensemble whose other members run in their own processes.
 * Runs until killed.
 *
 * <p>Arguments: tick (ms), data directory, this member's index, then one {@code
 * clientPort:electionPort:quorumPort} per member.
 */
final class ZooKeeperChild {

  private ZooKeeperChild() {}

  public static void main(String[] args) throws Exception {
    int tick = Integer.parseInt(args[0]);
    File data = new File(args[1]);
    int index = Integer.parseInt(args[2]);
    List<InstanceSpec> members = new ArrayList<>();
    for (int i = 3; i < args.length; i++) {
      String[] ports = args[i].split(":");
      File memberData = new File(data, "member-" + (i - 2));
      if (!memberData.isDirectory() && !memberData.mkdirs()) {
        throw new IllegalStateException("cannot create " + memberData);
      }
      members.add(
          new InstanceSpec(
              memberData,
              Integer.parseInt(ports[0]),
              Integer.parseInt(ports[1]),
              Integer.parseInt(ports[2]),
              false,
              i - 2,
              tick,
              -1,
              Map.of("clientPortAddress", "127.0.0.1"),
              "127.0.0.1"));
    }
    if (members.size() == 1) {
      new TestingServer(members.get(0), true);
    } else {
      new TestingZooKeeperServer(new QuorumConfigBuilder(members), index).start();
    }
    Thread.currentThread().join();
  }
}
