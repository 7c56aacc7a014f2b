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
    proxy = FaultProxy.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), echo.getLocalPort()));
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
  void cutClosesOpenConnectionsAndRefusesNewOnesUntilHealed() throws IOException {
    try (Socket before = connect()) {
      assertThat(roundTrip(before, "a")).isEqualTo("a");
      proxy.cut();
      assertThat(before.getInputStream().read()).as("an open connection after the cut").isEqualTo(-1);
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
      assertThatThrownBy(() -> torn.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
      try (Socket during = connect()) {
        during.setSoTimeout(300);
        during.getOutputStream().write('y');
        assertThatThrownBy(() -> during.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
      }

      proxy.heal();
      torn.setSoTimeout(2_000);
      assertThat(torn.getInputStream().read()).as("a connection that lost bytes, after the heal").isEqualTo(-1);
      assertThat(roundTrip(idle, "still")).as("a connection that lost nothing").isEqualTo("still");
      try (Socket fresh = connect()) {
        assertThat(roundTrip(fresh, "new")).isEqualTo("new");
      }
    }
  }

  @Test
  void refusesUpstreamsOtherThanLoopback() {
    assertThatThrownBy(() -> FaultProxy.start(new InetSocketAddress("192.0.2.1", 5432)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("loopback");
  }
}
