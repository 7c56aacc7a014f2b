package dev.baton.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FaultProxyTest {

  private ServerSocket echo;
  private FaultProxy proxy;

  @BeforeEach
  void startEchoServerAndProxy() throws IOException {
    echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor =
        new Thread(
            () -> {
              while (!echo.isClosed()) {
                try {
                  Socket s = echo.accept();
                  Thread t = new Thread(() -> echoAll(s), "echo");
                  t.setDaemon(true);
                  t.start();
                } catch (IOException e) {
                  return;
                }
              }
            },
            "echo-accept");
    acceptor.setDaemon(true);
    acceptor.start();
    proxy =
        FaultProxy.start(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), echo.getLocalPort()));
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    echo.close();
  }

  private static void echoAll(Socket s) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      byte[] buffer = new byte[1024];
      int n;
      while ((n = in.read(buffer)) >= 0) {
        out.write(buffer, 0, n);
      }
    } catch (IOException e) {
      // The proxy closed us: the test is over for this connection.
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket();
    s.connect(proxy.address(), 2_000);
    s.setSoTimeout(2_000);
    return s;
  }

  private static String roundTrip(Socket s, String text) throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    s.getOutputStream().write(bytes);
    byte[] answer = s.getInputStream().readNBytes(bytes.length);
    return new String(answer, StandardCharsets.UTF_8);
  }

  @Test
  void forwardsBothWaysAndCountsBytesAndConnections() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "hello")).isEqualTo("hello");
      assertThat(proxy.bytesToServer()).isEqualTo(5);
      assertThat(proxy.bytesToClient()).isEqualTo(5);
      assertThat(proxy.connectionsAccepted()).isEqualTo(1);
      assertThat(proxy.openConnections()).isEqualTo(1);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> proxy.openConnections() == 0);
  }

  @Test
  void eachConnectionsTapSeesWhatIsForwardedEachWayInOrder() throws IOException {
    List<StringBuilder> toServer = new CopyOnWriteArrayList<>();
    List<StringBuilder> toClient = new CopyOnWriteArrayList<>();
    proxy.tap(
        () -> {
          StringBuilder up = new StringBuilder();
          StringBuilder down = new StringBuilder();
          toServer.add(up);
          toClient.add(down);
          return (toward, nanos, bytes, offset, length) ->
              (toward ? up : down)
                  .append(new String(bytes, offset, length, StandardCharsets.UTF_8));
        });
    try (Socket first = connect();
        Socket second = connect()) {
      assertThat(roundTrip(first, "ab")).isEqualTo("ab");
      assertThat(roundTrip(second, "x")).isEqualTo("x");
      assertThat(roundTrip(first, "cd")).isEqualTo("cd");
    }
    // An answer is tapped before it is written on, so the client has it only after the tap ran.
    assertThat(toServer).extracting(StringBuilder::toString).containsExactly("abcd", "x");
    assertThat(toClient).extracting(StringBuilder::toString).containsExactly("abcd", "x");
  }

  @Test
  void cutClosesOpenConnectionsAndRefusesNewOnesUntilHealed() throws IOException {
    try (Socket before = connect()) {
      assertThat(roundTrip(before, "a")).isEqualTo("a");
      proxy.cut();
      assertThat(before.getInputStream().read())
          .as("an open connection after the cut")
          .isEqualTo(-1);
    }
    try (Socket during = connect()) {
      assertThat(during.getInputStream().read()).as("a new connection while cut").isEqualTo(-1);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> proxy.openConnections() == 0);
    proxy.heal();
    try (Socket after = connect()) {
      assertThat(roundTrip(after, "back")).isEqualTo("back");
    }
  }

  @Test
  void blackholeNeverAnswersAndHealResetsTornConnectionsButKeepsIdleOnes() throws IOException {
    try (Socket torn = connect();
        Socket idle = connect()) {
      assertThat(roundTrip(torn, "1")).isEqualTo("1");
      assertThat(roundTrip(idle, "2")).isEqualTo("2");
      proxy.blackhole();
      torn.setSoTimeout(300);
      torn.getOutputStream().write('x');
      // Proving that nothing comes back needs a time limit; 300 ms is ample on loopback.
      assertThatThrownBy(() -> torn.getInputStream().read())
          .isInstanceOf(SocketTimeoutException.class);
      try (Socket during = connect()) {
        during.setSoTimeout(300);
        during.getOutputStream().write('y');
        assertThatThrownBy(() -> during.getInputStream().read())
            .isInstanceOf(SocketTimeoutException.class);
      }

      proxy.heal();
      torn.setSoTimeout(2_000);
      assertThat(torn.getInputStream().read())
          .as("a connection that lost bytes, after the heal")
          .isEqualTo(-1);
      assertThat(roundTrip(idle, "still")).as("a connection that lost nothing").isEqualTo("still");
      try (Socket fresh = connect()) {
        assertThat(roundTrip(fresh, "new")).isEqualTo("new");
      }
    }
  }

  @Test
  void notReadingRequestsFillsTheClientsSendBufferUntilItsWriteBlocksAndHealResumes()
      throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "1")).isEqualTo("1");
      proxy.stopReadingRequests();
      long before = proxy.bytesToServer();
      byte[] chunk = new byte[64 * 1024];
      AtomicLong written = new AtomicLong();
      Thread writer =
          new Thread(
              () -> {
                try {
                  while (true) {
                    s.getOutputStream().write(chunk);
                    written.addAndGet(chunk.length);
                  }
                } catch (IOException e) {
                  // the socket was closed at the end of the test
                }
              },
              "filling-writer");
      writer.setDaemon(true);
      writer.start();
      // The writer blocks once the buffers on both sides are full: it stops making progress.
      long[] last = {-1};
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(300))
          .until(
              () -> {
                long now = written.get();
                boolean stalled = now == last[0];
                last[0] = now;
                return stalled && writer.isAlive();
              });
      // What the loopback buffers on both sides absorbed: a larger write of a client blocks.
      System.out.println(
          "a client wrote "
              + written.get() / 1024
              + " KiB through a proxy that stopped reading before its write blocked");
      assertThat(proxy.bytesToServer())
          .as("nothing reaches the server")
          .isLessThanOrEqualTo(before + 16 * 1024);
      assertThat(written.get()).as("written before blocking").isLessThan(64L * 1024 * 1024);

      proxy.heal();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> proxy.bytesToServer() > before + 16 * 1024);
    }
  }

  @Test
  void notReadingAnswersLetsRequestsThroughAndHoldsTheAnswersUntilHealed() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "1")).isEqualTo("1");
      proxy.stopReadingAnswers();
      s.setSoTimeout(300);
      s.getOutputStream().write('x');
      await().atMost(Duration.ofSeconds(20)).until(() -> proxy.bytesToServer() == 2);
      // Proving that nothing comes back needs a time limit; 300 ms is ample on loopback.
      assertThatThrownBy(() -> s.getInputStream().read())
          .isInstanceOf(SocketTimeoutException.class);

      proxy.heal();
      s.setSoTimeout(2_000);
      assertThat(s.getInputStream().read()).as("the held answer, after the heal").isEqualTo('x');
    }
  }

  @Test
  void refusesUpstreamsOtherThanLoopback() {
    assertThatThrownBy(() -> FaultProxy.start(new InetSocketAddress("192.0.2.1", 5432)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("loopback");
  }
}
