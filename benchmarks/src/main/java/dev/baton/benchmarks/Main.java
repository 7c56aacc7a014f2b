package dev.baton.benchmarks;

import dev.baton.benchmarks.Results.ContenderResult;
import dev.baton.benchmarks.Results.Scale;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The benchmark harness: {@code scripts/benchmarks} runs it. Measures every backend and the peer
 * libraries on the same servers, then writes {@code benchmarks.md} and {@code benchmarks.svg} to
 * the output directory.
 *
 * <pre>
 * Main [--out DIR] [--smoke] [--only NAME,NAME...] [--no-scale] [--scale-sizes N,N...] [--log FILE]
 * </pre>
 *
 * <p>{@code --only} takes contender names (the report's row names) and {@code consul lock} for the
 * section that runs {@code elect} beside {@code consul lock}; a full run has every one of them.
 */
public final class Main {

  private Main() {}

  public static void main(String[] args) throws Exception {
    Options options = Options.parse(args);
    // Before anything loads H2, SLF4J or ZooKeeper.
    System.setProperty("h2.bindAddress", "127.0.0.1");
    System.setProperty("zookeeper.admin.enableServer", "false");
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
    if (options.log.isPresent()) {
      Path log = options.log.get().toAbsolutePath();
      Files.createDirectories(log.getParent());
      System.setProperty("org.slf4j.simpleLogger.logFile", log.toString());
      julTo(log.resolveSibling(log.getFileName() + ".jul"));
    }
    int exit = 1;
    try {
      run(options, System.out);
      exit = 0;
    } catch (Exception | Error e) {
      e.printStackTrace();
    } finally {
      // Some libraries (the mock server's vert.x) leave non-daemon threads behind.
      System.exit(exit);
    }
  }

  /** java.util.logging (vert.x, the mock server) to a file of its own instead of the console. */
  private static void julTo(Path file) throws java.io.IOException {
    java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
    for (java.util.logging.Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    java.util.logging.FileHandler handler = new java.util.logging.FileHandler(file.toString());
    handler.setFormatter(new java.util.logging.SimpleFormatter());
    root.addHandler(handler);
  }

  /** What a run produced: the figures, and where the report and chart were written. */
  record Run(
      List<ContenderResult> results,
      List<Scale> scale,
      List<String> skipped,
      Optional<BesideConsulLock> besideConsulLock,
      Path markdown,
      Path chart) {}

  /** Runs the benchmark and writes the report and chart. */
  static Run run(Options options, PrintStream progress) throws Exception {
    Settings settings = options.smoke ? Settings.smokeTest() : Settings.full();
    if (!options.only.isEmpty()) {
      settings = settings.onlyThese(options.only);
    }
    if (!options.scaleSizes.isEmpty()) {
      settings = settings.withScaleSizes(options.scaleSizes);
    }
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    Machine machine = Machine.describe();
    progress.println(
        "Baton benchmarks (" + (settings.smoke() ? "smoke" : "full") + ") on " + machine.summary());
    String runId = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);
    List<ContenderResult> results = new ArrayList<>();
    List<Scale> scale = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    Optional<BesideConsulLock> besideConsulLock = Optional.empty();
    Versions.Catalog versions = new Versions.Catalog();
    versions.put("Java", System.getProperty("java.runtime.version"));
    versions.put("jOOQ (backend-jdbc)", Versions.of(org.jooq.DSLContext.class, "org.jooq", "jooq"));
    versions.put(
        "HikariCP",
        Versions.of(com.zaxxer.hikari.HikariDataSource.class, "com.zaxxer", "HikariCP"));
    versions.put(
        "PostgreSQL JDBC driver",
        Versions.of(org.postgresql.Driver.class, "org.postgresql", "postgresql"));
    versions.put(
        "MariaDB Connector/J",
        Versions.of(org.mariadb.jdbc.Driver.class, "org.mariadb.jdbc", "mariadb-java-client"));
    versions.put(
        "Curator (backend-zookeeper)",
        Versions.of(
            org.apache.curator.framework.CuratorFramework.class,
            "org.apache.curator",
            "curator-framework"));
    versions.put(
        "jetcd (backend-etcd)", Versions.of(io.etcd.jetcd.Client.class, "io.etcd", "jetcd-core"));
    versions.put(
        "fabric8 kubernetes-client (backend-kubernetes)",
        Versions.of(
            io.fabric8.kubernetes.client.KubernetesClient.class,
            "io.fabric8",
            "kubernetes-client-api"));
    try (Servers servers = new Servers()) {
      Measurements measurements = new Measurements(settings, runId, progress);
      for (List<Candidates.Entry> sameServer :
          byServer(Candidates.all(settings, servers, versions))) {
        List<Contender> contenders = new ArrayList<>();
        Map<Contender, Measurements.HandoverRounds> handovers = Map.of();
        try {
          for (Candidates.Entry entry : sameServer) {
            if (!settings.includes(entry.name())) {
              continue;
            }
            Optional<String> missing = entry.missing().get();
            if (missing.isPresent()) {
              skipped.add(entry.name() + ": " + missing.get());
              progress.println("[" + entry.name() + "] skipped: " + missing.get());
              continue;
            }
            try {
              contenders.add(entry.create().get());
            } catch (Exception e) {
              skipped.add(entry.name() + ": could not be set up: " + e);
              progress.println("[" + entry.name() + "] could not be set up: " + e);
            }
          }
          Map<Contender, Measurements.FirstLeaderRounds> firstLeaders =
              measurements.firstLeaders(contenders);
          Supplier<Optional<EtcdServer.WalFsyncs>> walFsyncs =
              () -> servers.etcdIfStarted().map(EtcdServer::walFsyncs);
          handovers = measurements.handovers(contenders, walFsyncs);
          for (Contender c : contenders) {
            Measurements.HandoverRounds handover = handovers.get(c);
            Optional<EtcdServer.WalFsyncs> before = walFsyncs.get();
            ContenderResult result = measurements.run(c, firstLeaders.get(c), handover);
            if (c instanceof BatonContender b && b.revoker().isPresent()) {
              try {
                result.leaseLost = measurements.leaseLost(b);
                progress.println(
                    "["
                        + c.name()
                        + "] lease lost: pushed p50 "
                        + Stats.ms(result.leaseLost.pushed().p50())
                        + " / max "
                        + Stats.ms(result.leaseLost.pushed().max())
                        + " ms, at the next renewal p50 "
                        + Stats.ms(result.leaseLost.polled().p50())
                        + " / max "
                        + Stats.ms(result.leaseLost.polled().max())
                        + " ms");
              } catch (Exception e) {
                result.notes.add("lease lost could not be measured: " + e);
                progress.println("[" + c.name() + "] lease lost could not be measured: " + e);
              }
            }
            // This contender's handover rounds, and then its idle and crash rounds.
            before
                .flatMap(
                    b -> handover.fsyncs.plus(walFsyncs.get().orElseThrow().since(b)).describe())
                .ifPresent(d -> result.etcdFsyncs = d);
            results.add(result);
          }
        } finally {
          // Groups whose contender's run did not come (an error before it) are still up.
          handovers.values().forEach(Measurements.HandoverRounds::close);
          for (Contender c : contenders) {
            try {
              c.close();
            } catch (Exception e) {
              progress.println("[" + c.name() + "] could not be closed: " + e);
            }
          }
        }
      }
      besideConsulLock = BesideConsulLock.runIfSelected(settings, servers, progress, skipped);
      if (!options.noScale) {
        scale.addAll(
            new ScaleDriver(
                    settings,
                    servers,
                    runId,
                    progress,
                    options.log.map(l -> l.toAbsolutePath().getParent()))
                .runAll());
      }
    }
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    Report report =
        new Report(
            settings, machine, versions, started, took, results, scale, skipped, besideConsulLock);
    Files.createDirectories(options.out);
    Path markdown = options.out.resolve("benchmarks.md");
    Path chart = options.out.resolve("benchmarks.svg");
    Files.writeString(markdown, report.markdown());
    Files.writeString(chart, Chart.svg(results));
    progress.println("wrote " + markdown + " and " + chart + " in " + took.toSeconds() + " s");
    return new Run(
        List.copyOf(results),
        List.copyOf(scale),
        List.copyOf(skipped),
        besideConsulLock,
        markdown,
        chart);
  }

  /** The entries in their order, those on the same server together. */
  private static List<List<Candidates.Entry>> byServer(List<Candidates.Entry> entries) {
    Map<String, List<Candidates.Entry>> groups = new LinkedHashMap<>();
    for (Candidates.Entry e : entries) {
      groups.computeIfAbsent(e.server(), k -> new ArrayList<>()).add(e);
    }
    return List.copyOf(groups.values());
  }

  /** Command-line options. */
  static final class Options {
    Path out = Path.of("docs");
    boolean smoke;
    boolean noScale;
    List<Integer> scaleSizes = new ArrayList<>();
    Set<String> only = new LinkedHashSet<>();
    Optional<Path> log = Optional.empty();

    static Options parse(String... args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--out" -> o.out = Path.of(value(args, ++i, "--out"));
          case "--smoke" -> o.smoke = true;
          case "--no-scale" -> o.noScale = true;
          case "--scale-sizes" -> o.scaleSizes.addAll(sizes(value(args, ++i, "--scale-sizes")));
          case "--only" -> o.only.addAll(Arrays.asList(value(args, ++i, "--only").split(",")));
          case "--log" -> o.log = Optional.of(Path.of(value(args, ++i, "--log")));
          default ->
              throw new IllegalArgumentException(
                  "unknown argument '"
                      + args[i]
                      + "'; accepted: --out DIR, --smoke, --no-scale, --scale-sizes N[,N...],"
                      + " --only NAME[,NAME...], --log FILE");
        }
      }
      return o;
    }

    private static List<Integer> sizes(String value) {
      List<Integer> sizes = new ArrayList<>();
      for (String n : value.split(",")) {
        try {
          sizes.add(Integer.parseInt(n.strip()));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(
              "--scale-sizes takes election counts such as 100,10000, but got '" + value + "'", e);
        }
        if (sizes.get(sizes.size() - 1) < 1) {
          throw new IllegalArgumentException(
              "--scale-sizes takes election counts of at least 1, but got '" + value + "'");
        }
      }
      return sizes;
    }

    private static String value(String[] args, int i, String option) {
      if (i >= args.length) {
        throw new IllegalArgumentException(option + " needs a value");
      }
      return args[i];
    }
  }

  /** A supplier that may throw, for setting contenders up. */
  @FunctionalInterface
  interface Setup<T> {
    T get() throws Exception;
  }
}
