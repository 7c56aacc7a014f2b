package dev.baton.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A server on loopback that accepts connections and then never reads or answers, as an API server
 * behind a dead network path looks to a client whose TCP handshake still completed.
 */
final class Blackhole implements AutoCloseable {

  private final ServerSocket socket;
  private final List<Socket> accepted = new CopyOnWriteArrayList<>();
  private final List<KubernetesClient> clients = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  private Blackhole(ServerSocket socket) {
    this.socket = socket;
    this.acceptor = new Thread(this::acceptForever, "blackhole-acceptor");
    this.acceptor.setDaemon(true);
    this.acceptor.start();
  }

  static Blackhole start() throws IOException {
    return new Blackhole(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
  }

  private void acceptForever() {
    while (!socket.isClosed()) {
      try {
        accepted.add(socket.accept());
      } catch (IOException e) {
        if (!socket.isClosed()) {
          throw new UncheckedIOException(e);
        }
      }
    }
  }

  int connectionsAccepted() {
    return accepted.size();
  }

  /** A client with fabric8's default timeouts and retries, as a caller might build one. */
  KubernetesClient client() {
    KubernetesClient client = clientOf("http://127.0.0.1:" + socket.getLocalPort());
    clients.add(client);
    return client;
  }

  /** A client of a loopback port that nothing listens on. */
  static KubernetesClient clientOfClosedPort() throws IOException {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    return clientOf("http://127.0.0.1:" + port);
  }

  private static KubernetesClient clientOf(String url) {
    Config config = Config.empty();
    config.setMasterUrl(url);
    config.setNamespace("test");
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  @Override
  public void close() throws IOException {
    clients.forEach(KubernetesClient::close);
    socket.close();
    for (Socket s : accepted) {
      s.close();
    }
  }
}
