package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.baton.testservers.ElectProcess;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * elect as an operator installs it: {@code elect-<version>.tar.gz} unpacked into an empty
 * directory, run with a {@code PATH} that has {@code java} and the usual tools but no {@code mvn},
 * from a working directory of its own: no Maven, no source tree.
 */
class ElectDistributionIT {

  private static final Path TARBALL =
      Path.of(System.getProperty("elect.distribution", "target/elect-unknown.tar.gz"))
          .toAbsolutePath();
  private static final String VERSION = System.getProperty("elect.expectedVersion", "");

  /**
   * Under target/, not a JUnit temporary directory: that would warn once for each of the thousand
   * links to /usr/bin below. Emptied at the start of each run, left for a look after it.
   */
  private static final Path root = TARBALL.resolveSibling("elect-distribution-it");

  /** The unpacked {@code elect-<version>} directory. */
  private static Path home;

  /** A directory with {@code java} and every program of /usr/bin and /bin but Maven's. */
  private static Path tools;

  @TempDir Path work;

  @BeforeAll
  static void unpack() throws IOException, InterruptedException {
    assertThat(TARBALL).as("built by the package phase").isRegularFile();
    if (Files.exists(root)) {
      try (Stream<Path> old = Files.walk(root)) {
        // Deepest first; a link is deleted, never what it points to (walk does not follow links).
        for (Path p : (Iterable<Path>) old.sorted(Comparator.reverseOrder())::iterator) {
          Files.delete(p);
        }
      }
    }
    Path opt = Files.createDirectories(root.resolve("opt"));
    assertThat(exec(List.of("tar", "xzf", TARBALL.toString(), "-C", opt.toString()), Map.of()))
        .isZero();
    home = opt.resolve("elect-" + VERSION);
    tools = Files.createDirectories(root.resolve("tools"));
    Files.createSymbolicLink(
        tools.resolve("java"), Path.of(System.getProperty("java.home"), "bin", "java"));
    for (String dir : List.of("/usr/bin", "/bin")) {
      try (Stream<Path> programs = Files.list(Path.of(dir))) {
        for (Path program : (Iterable<Path>) programs::iterator) {
          String name = program.getFileName().toString();
          Path link = tools.resolve(name);
          if (!name.startsWith("mvn") && !Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
            Files.createSymbolicLink(link, program);
          }
        }
      }
    }
  }

  /**
   * The environment of every run: only the tools on PATH (and bin, when asked), a HOME of its own.
   */
  private static Map<String, String> env(boolean binOnPath) {
    return Map.of(
        "PATH", (binOnPath ? home.resolve("bin") + ":" : "") + tools, "HOME", root.toString());
  }

  private static int exec(List<String> command, Map<String, String> env)
      throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
    builder.environment().putAll(env);
    Process p = builder.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(String.join(" ", command)).isTrue();
    return p.exitValue();
  }

  @Test
  void the_tarball_holds_a_launcher_the_jar_and_no_sources_and_the_path_has_no_maven()
      throws Exception {
    try (Stream<Path> top = Files.list(home)) {
      assertThat(top.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("bin", "lib", "README", "LICENSE");
    }
    assertThat(home.resolve("bin/elect")).isExecutable();
    assertThat(home.resolve("lib/elect.jar")).isRegularFile();
    assertThat(exec(List.of("bash", "-c", "! command -v mvn && command -v java"), env(true)))
        .as("mvn must not be found on the PATH elect runs with, and java must")
        .isZero();
  }

  /**
   * The zip, for hosts without tar, holds what the tarball holds, and marks the launcher executable
   * for {@code unzip} to restore.
   */
  @Test
  void the_zip_holds_the_same_files_as_the_tarball_and_an_executable_launcher() throws Exception {
    Path zip = TARBALL.resolveSibling(TARBALL.getFileName().toString().replace(".tar.gz", ".zip"));
    assertThat(zip).as("built by the package phase beside the tarball").isRegularFile();
    Map<String, Integer> zipped = unixModes(zip);
    List<String> tarred;
    try (Stream<Path> files = Files.walk(home)) {
      tarred =
          files
              .filter(Files::isRegularFile)
              .map(p -> "elect-" + VERSION + "/" + home.relativize(p))
              .sorted()
              .toList();
    }
    assertThat(zipped.keySet().stream().filter(name -> !name.endsWith("/")).sorted())
        .containsExactlyElementsOf(tarred);
    assertThat(zipped.get("elect-" + VERSION + "/bin/elect") & 0111)
        .as("the launcher's execute bits in the zip")
        .isEqualTo(0111);
  }

  /**
   * Each entry of a zip file and the Unix mode in its external attributes, read from the central
   * directory, since {@code java.util.zip} does not expose them.
   */
  private static Map<String, Integer> unixModes(Path zip) throws IOException {
    ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(zip)).order(ByteOrder.LITTLE_ENDIAN);
    int end = bytes.limit() - 22;
    while (end >= 0 && bytes.getInt(end) != 0x06054b50) {
      end--;
    }
    assertThat(end).as("the zip's end of central directory record").isNotNegative();
    int entries = Short.toUnsignedInt(bytes.getShort(end + 10));
    int at = bytes.getInt(end + 16);
    Map<String, Integer> modes = new TreeMap<>();
    for (int i = 0; i < entries; i++) {
      assertThat(bytes.getInt(at)).as("central directory entry %d", i).isEqualTo(0x02014b50);
      int nameLength = Short.toUnsignedInt(bytes.getShort(at + 28));
      int extraLength = Short.toUnsignedInt(bytes.getShort(at + 30));
      int commentLength = Short.toUnsignedInt(bytes.getShort(at + 32));
      int mode = bytes.getInt(at + 38) >>> 16;
      String name = new String(bytes.array(), at + 46, nameLength, StandardCharsets.UTF_8);
      modes.put(name, mode);
      at += 46 + nameLength + extraLength + commentLength;
    }
    return modes;
  }

  @Test
  void version_through_a_symlink_from_another_directory() throws IOException {
    Path link = Files.createDirectories(root.resolve("local-bin")).resolve("elect");
    if (!Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
      Files.createSymbolicLink(link, home.resolve("bin/elect"));
    }

    ElectProcess.Finished version =
        ElectProcess.runToEnd(
            work, Duration.ofSeconds(60), env(false), List.of(link.toString(), "--version"));

    assertThat(version.status()).as(version.output()).isZero();
    assertThat(version.output()).startsWith("elect " + VERSION + "\nJava 17");
  }

  @Test
  void status_as_json_on_the_embedded_default_in_a_directory_of_its_own() throws IOException {
    ElectProcess.Finished status =
        ElectProcess.runToEnd(
            work,
            Duration.ofSeconds(60),
            env(true),
            List.of("elect", "status", "--output", "json"));

    assertThat(status.status()).as(status.output()).isEqualTo(StatusCommand.NO_LEADER);
    String line = status.output().lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow();
    JsonNode json = new ObjectMapper().readTree(line);
    assertThat(json.get("schema").asInt()).isEqualTo(1);
    assertThat(json.get("backend").asText()).isEqualTo("file");
    assertThat(json.get("store").asText()).contains(work.resolve(".baton").toString());
    assertThat(json.get("leader").isNull()).isTrue();
    assertThat(home.resolve(".baton"))
        .as("nothing written where elect is installed")
        .doesNotExist();
  }

  @Test
  void systemd_accepts_the_unit_with_opt_elect_pointed_at_the_unpacked_tarball()
      throws IOException, InterruptedException {
    Optional<Path> analyze =
        Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
            .filter(d -> !d.isEmpty())
            .map(d -> Path.of(d, "systemd-analyze"))
            .filter(Files::isExecutable)
            .findFirst();
    assumeTrue(
        analyze.isPresent(),
        "systemd-analyze is not on PATH: docs/elect.service is not checked by systemd here"
            + " (nothing is installed for it; ElectServiceTest still checks its settings)");
    Path unit = Files.createDirectories(root.resolve("systemd")).resolve("elect-billing.service");
    Files.writeString(
        unit,
        Files.readString(Path.of("..", "docs", "elect.service"))
            .replace("/opt/elect/", home + "/"));

    Process verify =
        new ProcessBuilder(analyze.get().toString(), "verify", unit.toString())
            .redirectErrorStream(true)
            .start();
    String said = new String(verify.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(verify.waitFor(60, TimeUnit.SECONDS)).isTrue();

    assertThat(verify.exitValue()).as(said).isZero();
    // systemd-analyze exits 0 after a setting it cannot parse, and says so: it must say nothing.
    assertThat(said).isBlank();
  }

  @Test
  void the_demo_runs_to_its_end_as_from_a_clone() {
    ElectProcess.Finished demo =
        ElectProcess.runToEnd(work, Duration.ofSeconds(120), env(true), List.of("elect", "demo"));
    System.out.println(demo.output());

    assertThat(demo.status()).as(demo.output()).isZero();
    assertThat(demo.output())
        .containsPattern("first election\\s+node-\\d")
        .containsPattern("crash failover\\s+node-\\d")
        .containsPattern("graceful handover\\s+node-\\d");
    assertThat(work.resolve(".baton")).isDirectory();
  }
}
