package dev.baton.testservers;

import static org.awaitility.Awaitility.await;

import dev.baton.conformance.ServerPorts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * An etcd cluster with one container per member, from the image {@value #IMAGE} names (an official
 * {@code gcr.io/etcd-development/etcd} or {@code quay.io/coreos/etcd} image works, as does the one
 * {@code scripts/docker-engine} builds; the command is {@code etcd} and its flags). Each member
 * binds its own loopback ports; a member can be killed and started again on them with its data, or
 * paused.
 */
public final class EtcdContainers implements EtcdServers {

  /** The etcd image of the container mode. */
  public static final String IMAGE = "baton.image.etcd";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final ContainerGroup members = new ContainerGroup();
  private final List<Integer> clientPorts;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

  private EtcdContainers(List<Integer> clientPorts) {
    this.clientPorts = clientPorts;
  }

  /** Starts {@code size} members and returns once every one of them reports itself healthy. */
  public static EtcdContainers start(int size) {
    ServerContainer.requireEngine();
    String image = ServerContainer.image(IMAGE, "local/baton-etcd:3.4");
    List<Integer> clientPorts = new ArrayList<>();
    List<Integer> peerPorts = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      clientPorts.add(ServerPorts.belowEphemeralRange());
      peerPorts.add(ServerPorts.belowEphemeralRange());
    }
    String initialCluster =
        java.util.stream.IntStream.range(0, size)
            .mapToObj(i -> "m" + i + "=http://127.0.0.1:" + peerPorts.get(i))
            .collect(Collectors.joining(","));
    String token = "baton-" + UUID.randomUUID();
    EtcdContainers cluster = new EtcdContainers(clientPorts);
    try {
      for (int i = 0; i < size; i++) {
        String client = "http://127.0.0.1:" + clientPorts.get(i);
        String peer = "http://127.0.0.1:" + peerPorts.get(i);
        cluster.members.add(
            ServerContainer.start(
                "etcd member m" + i,
                image,
                Map.of(),
                List.of(
                    "etcd",
                    "--name",
                    "m" + i,
                    "--data-dir",
                    "/tmp/baton-etcd/m" + i, // writable also where an image runs etcd as non-root
                    "--listen-client-urls",
                    client,
                    "--advertise-client-urls",
                    client,
                    "--listen-peer-urls",
                    peer,
                    "--initial-advertise-peer-urls",
                    peer,
                    "--initial-cluster",
                    initialCluster,
                    "--initial-cluster-token",
                    token,
                    "--initial-cluster-state",
                    "new")));
      }
      cluster.awaitHealthy();
      return cluster;
    } catch (RuntimeException | Error e) {
      String logs = cluster.members.logs();
      cluster.close();
      throw new IllegalStateException(
          "cannot start an etcd cluster of " + size + " from " + image + ":\n" + logs, e);
    }
  }

  /** Every member's client address, in member order. */
  @Override
  public List<InetSocketAddress> clientAddresses() {
    return clientPorts.stream().map(p -> new InetSocketAddress("127.0.0.1", p)).toList();
  }

  @Override
  public String[] endpoints() {
    return clientPorts.stream().map(p -> "http://127.0.0.1:" + p).toArray(String[]::new);
  }

  /** The image every member's container runs, as the engine reports it. */
  public List<String> images() {
    return members.images();
  }

  public int size() {
    return members.size();
  }

  /**
   * Kills member {@code index} (SIGKILL); its container and data stay for {@link #restart(int)}.
   */
  public void kill(int index) {
    members.kill(index);
  }

  /**
   * Starts killed member {@code index} again on its ports with its data, and waits until it is
   * healthy.
   */
  public void restart(int index) {
    members.restart(index);
    awaitHealthy(index);
  }

  @Override
  public void killAll() {
    members.killAll();
  }

  /** Starts every killed member again and waits until the cluster is healthy. */
  @Override
  public void restartAll() {
    members.restartKilled();
    awaitHealthy();
  }

  /**
   * Freezes member {@code index}: it keeps its connections and answers nothing until {@link
   * #unpause(int)}.
   */
  public void pause(int index) {
    members.pause(index);
  }

  public void unpause(int index) {
    members.unpause(index);
  }

  public void awaitHealthy() {
    for (int i = 0; i < members.size(); i++) {
      awaitHealthy(i);
    }
  }

  private void awaitHealthy(int index) {
    await("etcd member m" + index + " is healthy")
        .atMost(START_TIMEOUT)
        .pollInterval(Duration.ofMillis(100))
        .until(() -> healthy(clientPorts.get(index)));
  }

  private boolean healthy(int port) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
            .timeout(Duration.ofSeconds(2))
            .build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200
          && response.body().replace(" ", "").contains("\"health\":\"true\"");
    } catch (IOException e) {
      return false; // not listening yet, or restarting
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Removes every member's container. */
  @Override
  public void close() {
    members.close();
  }
}
