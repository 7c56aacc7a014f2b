package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.baton.conformance.RequiredServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The container image recipe (src/docker/Dockerfile), built from the distribution tarball on the
 * suite's local Debian image and run once: in the container pass of scripts/test ({@code
 * -Dbaton.servers=containers}, with the engine scripts/docker-engine starts).
 */
class ElectImageIT {

  private static final Path TARBALL =
      Path.of(System.getProperty("elect.distribution", "target/elect-unknown.tar.gz"))
          .toAbsolutePath();
  private static final String VERSION = System.getProperty("elect.expectedVersion", "");
  private static final String IMAGE = "local/baton-elect:" + VERSION;

  record Result(int status, String output) {}

  @BeforeAll
  static void build() throws IOException, InterruptedException {
    RequiredServer.require(
        "containers".equals(System.getProperty("baton.servers")),
        "a Docker engine for the image recipe (-Dbaton.servers=containers)",
        "scripts/docker-engine start, export what it prints, then run this test with"
            + " -Dbaton.servers=containers");
    Path context = TARBALL.resolveSibling("elect-image-context");
    Files.createDirectories(context);
    Files.copy(
        Path.of("src", "docker", "Dockerfile"),
        context.resolve("Dockerfile"),
        StandardCopyOption.REPLACE_EXISTING);
    Files.copy(
        TARBALL, context.resolve(TARBALL.getFileName()), StandardCopyOption.REPLACE_EXISTING);

    Result built =
        docker(
            Duration.ofMinutes(20),
            "build",
            "--network",
            "host",
            "--build-arg",
            "VERSION=" + VERSION,
            "-t",
            IMAGE,
            context.toString());
    assertThat(built.status()).as(built.output()).isZero();
  }

  private static Result docker(Duration timeout, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("docker"));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    // The classic builder: BuildKit is not installed with the suite's engine.
    builder.environment().put("DOCKER_BUILDKIT", "0");
    Path log = Files.createTempFile("elect-docker-", ".log");
    builder.redirectOutput(log.toFile());
    Process p = builder.start();
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        throw new AssertionError(
            String.join(" ", command)
                + " did not finish within "
                + timeout
                + ":\n"
                + Files.readString(log, StandardCharsets.UTF_8));
      }
      return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    } finally {
      Files.delete(log);
    }
  }

  private static Result run(Duration timeout, String... args)
      throws IOException, InterruptedException {
    String name = "elect-image-it-" + System.nanoTime();
    List<String> command =
        new ArrayList<>(List.of("run", "--rm", "--name", name, "--network", "host", IMAGE));
    command.addAll(List.of(args));
    try {
      return docker(timeout, command.toArray(String[]::new));
    } catch (AssertionError e) {
      // The client was killed; the container would run on without this.
      docker(Duration.ofMinutes(1), "rm", "--force", name);
      throw e;
    }
  }

  @Test
  void version_status_as_json_and_the_demo_run_in_the_image() throws Exception {
    Result version = run(Duration.ofMinutes(2), "--version");
    assertThat(version.status()).as(version.output()).isZero();
    assertThat(version.output()).startsWith("elect " + VERSION + "\nJava 17");

    Result status = run(Duration.ofMinutes(2), "status", "--output", "json");
    assertThat(status.status()).as(status.output()).isEqualTo(StatusCommand.NO_LEADER);
    JsonNode json =
        new ObjectMapper()
            .readTree(
                status.output().lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow());
    assertThat(json.get("store").asText()).contains("/var/lib/elect/.baton/leases");
    assertThat(json.get("leader").isNull()).isTrue();

    Result demo = run(Duration.ofSeconds(120), "demo");
    System.out.println(demo.output());
    assertThat(demo.status()).as(demo.output()).isZero();
    assertThat(demo.output()).containsPattern("graceful handover\\s+node-\\d");
  }
}
