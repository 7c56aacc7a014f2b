package dev.baton.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.benchmarks.WireLog.Kind;
import dev.baton.benchmarks.WireLog.Message;
import dev.baton.conformance.FaultProxy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ZooKeeperWireTest {

  private static final int DELETE = 2;
  private static final int GET_DATA = 4;

  private ZooKeeperServerInJvm zk;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeEach
  void startServer() {
    zk = ZooKeeperServerInJvm.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    zk.close();
  }

  private CuratorFramework client(FaultProxy proxy) throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(
            "127.0.0.1:" + proxy.port(), 10_000, 10_000, new RetryOneTime(100));
    open.add(client);
    client.start();
    assertThat(client.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
    return client;
  }

  private FaultProxy proxy() {
    FaultProxy proxy = FaultProxy.start(zk.address());
    open.add(proxy);
    return proxy;
  }

  @Test
  void aHandoverIsCutWhereTheWireShowsItsSteps() throws Exception {
    FaultProxy leaverProxy = proxy();
    FaultProxy nextProxy = proxy();
    WireLog leaverWire = ZooKeeperWire.tapping(leaverProxy);
    WireLog nextWire = ZooKeeperWire.tapping(nextProxy);
    CuratorFramework leaver = client(leaverProxy);
    CuratorFramework next = client(nextProxy);
    leaver.create().withMode(CreateMode.EPHEMERAL).forPath("/held", new byte[] {1});
    CountDownLatch told = new CountDownLatch(1);
    next.checkExists()
        .usingWatcher(
            (Watcher)
                e -> {
                  if (e.getType() == EventType.NodeDeleted) {
                    told.countDown();
                  }
                })
        .forPath("/held");

    long close = System.nanoTime();
    leaver.delete().forPath("/held");
    assertThat(told.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(next.checkExists().forPath("/held")).isNull();
    long elected = System.nanoTime();

    assertThat(leaverWire.between(close, elected))
        .usingRecursiveFieldByFieldElementComparatorIgnoringFields("nanos")
        .containsSubsequence(
            new Message(0, Kind.REQUEST, "delete", true),
            new Message(0, Kind.ANSWER, "delete", false));
    WireLog.Split split = WireLog.handover(leaverWire, nextWire, close, elected).orElseThrow();
    assertThat(split.requests()).isEqualTo("exists");
    assertThat(
            List.of(
                split.toRelease(),
                split.toTold(),
                split.toFirstRequest(),
                split.toLastAnswer(),
                split.toElected()))
        .allSatisfy(ms -> assertThat(ms).isGreaterThanOrEqualTo(0));
    assertThat(
            split.toRelease()
                + split.toTold()
                + split.toFirstRequest()
                + split.toLastAnswer()
                + split.toElected())
        .isCloseTo((elected - close) / 1e6, Offset.offset(1e-6));
  }

  @Test
  void requestsAnswersAndWatchEventsAreReadWithTheirOpcodes() throws Exception {
    FaultProxy proxy = proxy();
    WireLog wire = ZooKeeperWire.tapping(proxy);
    long start = System.nanoTime();
    CuratorFramework client = client(proxy);
    CountDownLatch created = new CountDownLatch(1);
    client.checkExists().usingWatcher((Watcher) e -> created.countDown()).forPath("/n");
    client.create().forPath("/n", new byte[2_000]);
    assertThat(created.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(client.getData().forPath("/n")).hasSize(2_000);

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(wire.between(start, System.nanoTime()))
                    .usingRecursiveFieldByFieldElementComparatorIgnoringFields("nanos")
                    .containsSubsequence(
                        new Message(0, Kind.REQUEST, "exists", false),
                        new Message(0, Kind.ANSWER, "exists", false),
                        new Message(0, Kind.REQUEST, "create2", true),
                        new Message(0, Kind.EVENT, "watch event", false),
                        new Message(0, Kind.REQUEST, "getData", false),
                        new Message(0, Kind.ANSWER, "getData", false)));
  }

  @Test
  void framesSplitAnywhereReadTheSameAsWhole() {
    ByteBuffer b = ByteBuffer.allocate(200);
    b.putInt(3).put(new byte[] {9, 9, 9}); // the connect request: no header
    b.putInt(8 + 5).putInt(7).putInt(GET_DATA).put(new byte[5]);
    b.putInt(8).putInt(-2).putInt(11); // a ping
    b.putInt(8 + 40).putInt(8).putInt(DELETE).put(new byte[40]);
    byte[] bytes = Arrays.copyOf(b.array(), b.position());

    List<String> whole = new ArrayList<>();
    new ZooKeeperWire.Frames(8)
        .feed(1, bytes, 0, bytes.length, (at, head) -> whole.add(at + ":" + head[7]));
    List<String> byteByByte = new ArrayList<>();
    ZooKeeperWire.Frames frames = new ZooKeeperWire.Frames(8);
    for (int i = 0; i < bytes.length; i++) {
      frames.feed(100 + i, bytes, i, 1, (at, head) -> byteByByte.add(at + ":" + head[7]));
    }

    assertThat(whole).containsExactly("1:" + GET_DATA, "1:11", "1:" + DELETE);
    // Each frame is timed by its length's first byte: 7, 24 and 36 bytes in.
    assertThat(byteByByte).containsExactly("107:" + GET_DATA, "124:11", "136:" + DELETE);
  }
}
