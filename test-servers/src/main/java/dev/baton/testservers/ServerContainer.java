package dev.baton.testservers;

import static org.awaitility.Awaitility.await;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.InternalServerErrorException;
import com.github.dockerjava.api.exception.NotFoundException;
import dev.baton.conformance.RequiredServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.startupcheck.IsRunningStartupCheckStrategy;
import org.testcontainers.utility.DockerImageName;

/**
 * One server in a container on the host's network: the server binds loopback ports the fixture
 * chose, so it keeps its address when the container is stopped and started again, members of a
 * cluster reach each other on 127.0.0.1, and no port mapping is needed. Besides start and remove, a
 * container can be paused (every process frozen, its sockets open: a hung server), killed and
 * started again with its data.
 */
final class ServerContainer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ServerContainer.class);

  /** How long {@link #pause()} tries again while the engine cannot freeze the container. */
  private static final Duration PAUSE_TRIES_FOR = Duration.ofSeconds(30);

  private final String name;
  private final GenericContainer<?> container;

  private ServerContainer(String name, GenericContainer<?> container) {
    this.name = name;
    this.container = container;
  }

  /**
   * Starts {@code image} with {@code env} and, when not empty, {@code command}; returns once the
   * container runs (the caller waits until its server answers).
   */
  @SuppressWarnings("resource") // closed by close()
  static ServerContainer start(
      String name, String image, Map<String, String> env, List<String> command) {
    requireEngine();
    requireLocalImage(image);
    GenericContainer<?> container =
        new GenericContainer<>(DockerImageName.parse(image))
            .withNetworkMode("host")
            .withEnv(env)
            .withStartupCheckStrategy(
                new IsRunningStartupCheckStrategy().withTimeout(Duration.ofSeconds(60)));
    if (!command.isEmpty()) {
      container.withCommand(command.toArray(String[]::new));
    }
    try {
      container.start();
    } catch (RuntimeException e) {
      container.stop();
      throw new IllegalStateException(
          "cannot start " + name + " from image " + image + ": " + e.getMessage(), e);
    }
    log.info("{}: container {} from {}", name, container.getContainerId().substring(0, 12), image);
    return new ServerContainer(name, container);
  }

  /** Fails in CI, and skips elsewhere, when no Docker engine answers. */
  static void requireEngine() {
    RequiredServer.require(
        DockerClientFactory.instance().isDockerAvailable(),
        "a Docker engine (for " + ServerMode.PROPERTY + "=containers)",
        "scripts/docker-engine start, and export what it prints");
  }

  /**
   * Fails at once when an image of ours ({@code local/...}, never in a registry) has not been
   * built, instead of letting Testcontainers try to pull it for minutes.
   */
  private static void requireLocalImage(String image) {
    if (!image.startsWith("local/")) {
      return;
    }
    try {
      DockerClientFactory.instance().client().inspectImageCmd(image).exec();
    } catch (NotFoundException e) {
      throw new IllegalStateException(
          "image " + image + " is not built; scripts/docker-engine start builds it", e);
    }
  }

  /** The image named by system property {@code property}, else {@code fallback}. */
  static String image(String property, String fallback) {
    String image = System.getProperty(property, "").trim();
    return image.isEmpty() ? fallback : image;
  }

  private DockerClient docker() {
    return DockerClientFactory.instance().client();
  }

  private String id() {
    return container.getContainerId();
  }

  /**
   * Freezes every process in the container (cgroup freezer); connections stay open, nothing
   * answers.
   */
  void pause() {
    log.info("{}: pausing container {}", name, id().substring(0, 12));
    pauseRetrying(name, () -> docker().pauseContainerCmd(id()).exec(), PAUSE_TRIES_FOR);
  }

  /**
   * Runs {@code pause} until it succeeds, trying again for up to {@code within} while the engine
   * answers that it is unable to freeze. runc gives up on a freeze that does not complete within
   * its few hundred milliseconds of tries, as when a server process sits in uninterruptible sleep
   * on a write to a busy disk (seen in CI, with another module's containers writing beside it), and
   * thaws the container again before it answers; so a later try starts from a running container,
   * and nothing is half-done. Any other error fails at once.
   */
  static void pauseRetrying(String name, Runnable pause, Duration within) {
    AtomicInteger refusals = new AtomicInteger();
    AtomicReference<RuntimeException> lastRefusal = new AtomicReference<>();
    try {
      await(name + " paused")
          .atMost(within)
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                try {
                  pause.run();
                  return true;
                } catch (InternalServerErrorException e) {
                  if (!isUnableToFreeze(e)) {
                    throw e;
                  }
                  log.info(
                      "{}: the engine could not freeze the container yet ({}); trying again",
                      name,
                      e.getMessage());
                  refusals.incrementAndGet();
                  lastRefusal.set(e);
                  return false;
                }
              });
    } catch (ConditionTimeoutException e) {
      if (lastRefusal.get() == null) {
        throw e;
      }
      throw new IllegalStateException(
          name
              + ": the engine could not freeze the container in "
              + refusals.get()
              + " tries over "
              + within.toSeconds()
              + " s; its last answer: "
              + lastRefusal.get().getMessage(),
          lastRefusal.get());
    }
  }

  private static boolean isUnableToFreeze(InternalServerErrorException e) {
    return e.getMessage() != null && e.getMessage().contains("unable to freeze");
  }

  void unpause() {
    docker().unpauseContainerCmd(id()).exec();
  }

  /**
   * Kills the server at once (SIGKILL); the container and its data stay, for {@link #restart()}.
   */
  void kill() {
    log.info("{}: killing container {}", name, id().substring(0, 12));
    docker().killContainerCmd(id()).exec();
    awaitState(false);
  }

  /** Starts the killed container again: the same server, data and ports. */
  void restart() {
    log.info("{}: starting container {} again", name, id().substring(0, 12));
    docker().startContainerCmd(id()).exec();
    awaitState(true);
  }

  boolean isRunning() {
    Boolean running = docker().inspectContainerCmd(id()).exec().getState().getRunning();
    return Boolean.TRUE.equals(running);
  }

  private void awaitState(boolean running) {
    await(name + (running ? " runs" : " stopped"))
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> isRunning() == running);
  }

  /** What the server wrote so far, for a failure message. */
  String logs() {
    try {
      return container.getLogs();
    } catch (RuntimeException e) {
      return "(no logs: " + e.getMessage() + ")";
    }
  }

  /** The image the container runs, as the engine reports it. */
  String image() {
    return docker().inspectContainerCmd(id()).exec().getConfig().getImage();
  }

  /** Stops and removes the container. */
  @Override
  public void close() {
    container.stop();
  }

  @Override
  public String toString() {
    return name + " (" + container.getDockerImageName() + ")";
  }
}
