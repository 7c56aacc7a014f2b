package dev.baton.benchmarks;

import dev.baton.benchmarks.Results.Scale;
import dev.baton.benchmarks.Results.ScaleStep;
import dev.baton.conformance.FaultProxy;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * Runs the scale measurement: per backend one child JVM ({@link ScaleRun}) holding N elections on
 * one store, reaching the server through one proxy of this process, so that the child's CPU time
 * and heap are the elections' alone while the servers run here (or, for PostgreSQL, MariaDB and
 * etcd, in their own processes). Server-side request counts (ZooKeeper, Kubernetes) and proxy bytes
 * are read here at the child's window marks.
 */
final class ScaleDriver {

  /**
   * A backend of the scale measurement, and the largest size it is run at here, with the reason.
   */
  record Plan(
      String backend,
      String label,
      Optional<InetSocketAddress> server,
      LongSupplier serverRequests,
      int maxElections,
      String limitReason) {}

  /** The etcd scale run whose store puts as many operations in a transaction as etcd takes. */
  static final String ETCD_MAX_TXN_OPS = "etcd, max-txn-ops " + EtcdServer.MAX_TXN_OPS;

  private final Settings settings;
  private final Servers servers;
  private final String runId;
  private final PrintStream progress;
  private final Optional<Path> logDir;

  ScaleDriver(
      Settings settings,
      Servers servers,
      String runId,
      PrintStream progress,
      Optional<Path> logDir) {
    this.settings = settings;
    this.servers = servers;
    this.runId = runId;
    this.progress = progress;
    this.logDir = logDir;
  }

  List<Scale> runAll() {
    List<Scale> results = new ArrayList<>();
    for (Plan plan : plans()) {
      results.add(run(plan));
    }
    return results;
  }

  private List<Plan> plans() {
    List<Plan> plans = new ArrayList<>();
    LongSupplier none = () -> -1;
    int all = Integer.MAX_VALUE;
    if (settings.includes("memory")) {
      plans.add(new Plan("memory", "memory", Optional.empty(), none, all, ""));
    }
    if (settings.includes("H2")) {
      plans.add(new Plan("h2", "H2", Optional.of(servers.h2().address()), none, all, ""));
    }
    if (settings.includes("PostgreSQL") && Servers.reachable(Servers.POSTGRES)) {
      plans.add(new Plan("postgresql", "PostgreSQL", Optional.of(Servers.POSTGRES), none, all, ""));
    }
    if (settings.includes("MariaDB") && Servers.reachable(Servers.MARIADB)) {
      plans.add(new Plan("mariadb", "MariaDB", Optional.of(Servers.MARIADB), none, all, ""));
    }
    if (settings.includes("ZooKeeper")) {
      ZooKeeperServerInJvm zk = servers.zookeeper();
      plans.add(
          new Plan(
              "zookeeper", "ZooKeeper", Optional.of(zk.address()), zk::packetsReceived, all, ""));
    }
    if (settings.includes("etcd") && EtcdServer.binary().isPresent()) {
      Optional<InetSocketAddress> etcd = Optional.of(servers.etcd().address());
      plans.add(new Plan("etcd", "etcd", etcd, none, all, ""));
      plans.add(new Plan("etcd-max-txn-ops", ETCD_MAX_TXN_OPS, etcd, none, all, ""));
    }
    if (settings.includes("Kubernetes")) {
      KubernetesMock mock = servers.kubernetes();
      plans.add(
          new Plan(
              "kubernetes",
              "Kubernetes",
              Optional.of(mock.address()),
              mock::requests,
              1_000,
              "a Lease is one object and Kubernetes has no batch write, so each renewal is an HTTP PUT of its own (client-go renews the same way): 1,000 elections are"
                  + " already 1,000 PUTs a second, and 10,000 would be 10,000 a second, more than a 2-core machine running the mock API server can answer within the renew"
                  + " deadline. What would make many elections cheap is one heartbeat Lease per process that its elections point at, as Kubernetes does for node"
                  + " heartbeats; a takeover would then first have to mark the holder's heartbeat with a compare-and-set, a protocol of its own that Baton does not have"));
    }
    return plans;
  }

  private Scale run(Plan plan) {
    List<Integer> sizes =
        settings.scaleSizes().stream().filter(n -> n <= plan.maxElections()).toList();
    List<ScaleStep> steps = new ArrayList<>();
    String note =
        settings.scaleSizes().size() > sizes.size()
            ? "not run above "
                + String.format(java.util.Locale.ROOT, "%,d", plan.maxElections())
                + " elections: "
                + plan.limitReason()
            : "";
    Optional<FaultProxy> proxy = plan.server().map(FaultProxy::start);
    Process child = null;
    try {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-Xmx1g");
      // For looking inside a scale run (a profiler, a flight recording); never set by the harness.
      String extra = System.getenv().getOrDefault("BATON_SCALE_JAVA_OPTIONS", "").strip();
      if (!extra.isEmpty()) {
        command.addAll(List.of(extra.split("\\s+")));
      }
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add("-Dh2.bindAddress=127.0.0.1");
      logDir.ifPresent(
          d ->
              command.add(
                  "-Dorg.slf4j.simpleLogger.logFile="
                      + d.resolve("scale-" + plan.backend() + ".log")));
      command.add(ScaleRun.class.getName());
      command.add(plan.backend());
      command.add(Integer.toString(proxy.map(FaultProxy::port).orElse(0)));
      command.add(sizes.stream().map(String::valueOf).collect(Collectors.joining(",")));
      command.add(Long.toString(settings.scaleWindow().toMillis()));
      command.add(Long.toString(settings.scaleSettleLimit().toMillis()));
      command.add(runId);
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(false);
      pb.redirectError(
          logDir
              .map(
                  d ->
                      ProcessBuilder.Redirect.to(
                          d.resolve("scale-" + plan.backend() + ".err").toFile()))
              .orElse(ProcessBuilder.Redirect.DISCARD));
      child = pb.start();
      BlockingQueue<String> lines = new LinkedBlockingQueue<>();
      Process c = child;
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    lines.add(line);
                  }
                } catch (IOException e) {
                  lines.add("FAILED reading the child's output: " + e);
                }
                lines.add("EOF");
              },
              "scale-reader");
      reader.setDaemon(true);
      reader.start();
      long deadline =
          System.nanoTime()
              + TimeUnit.SECONDS.toNanos(
                  60
                      + sizes.stream()
                          .mapToLong(
                              n ->
                                  40
                                      + settings.scaleSettleLimit().toSeconds()
                                      + settings.scaleWindow().toSeconds()
                                      + n / 100)
                          .sum());
      long bytesAtStart = 0;
      long serverAtStart = 0;
      while (true) {
        String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (line == null) {
          note = join(note, "the scale process did not finish in time and was stopped");
          break;
        }
        if (line.equals("EOF")) {
          break;
        }
        if (line.startsWith("WINDOW-START")) {
          bytesAtStart = proxy.map(FaultProxy::bytesToServer).orElse(0L);
          serverAtStart = plan.serverRequests().getAsLong();
        } else if (line.startsWith("WINDOW-END")) {
          long bytes = proxy.map(FaultProxy::bytesToServer).orElse(0L) - bytesAtStart;
          long server = plan.serverRequests().getAsLong();
          pending = new long[] {bytes, server < 0 ? -1 : server - serverAtStart};
        } else if (line.startsWith("STEP ")) {
          ScaleStep step = parse(line, pending, proxy.isPresent());
          steps.add(step);
          progress.println(
              String.format(
                  java.util.Locale.ROOT,
                  "[scale %s] %,d elections: %d led, %d step-downs, %.1f %% of a core, %.0f MB heap, %.0f store calls/s, %s",
                  plan.label(),
                  step.elections(),
                  step.elected(),
                  step.stepDowns(),
                  step.cpuPercentOfCore(),
                  step.heapMegabytes(),
                  step.storeCallsPerSecond(),
                  step.problem().isEmpty() ? "ok" : step.problem()));
        } else if (line.startsWith("FAILED")) {
          note = join(note, line.substring("FAILED".length()).trim());
        }
      }
    } catch (IOException e) {
      note = join(note, "the scale process could not run: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      note = join(note, "interrupted");
    } finally {
      if (child != null) {
        stop(child);
      }
      proxy.ifPresent(FaultProxy::close);
    }
    return new Scale(plan.label(), steps, note);
  }

  private long[] pending = {0, -1};

  private ScaleStep parse(String line, long[] window, boolean hasNetwork) {
    Map<String, String> f = new HashMap<>();
    for (String part : line.substring("STEP ".length()).split(" ")) {
      int eq = part.indexOf('=');
      if (eq > 0) {
        f.put(part.substring(0, eq), part.substring(eq + 1));
      }
    }
    double seconds = Double.parseDouble(f.get("seconds"));
    long childRequests = Long.parseLong(f.get("requests"));
    double requestsPerSecond = window[1] >= 0 ? window[1] / seconds : childRequests / seconds;
    return new ScaleStep(
        Integer.parseInt(f.get("elections")),
        Integer.parseInt(f.get("elected")),
        Long.parseLong(f.get("stepDowns")),
        Long.parseLong(f.get("cpuMillis")) / 10.0 / seconds,
        Long.parseLong(f.get("jitMillis")) / 10.0 / seconds,
        Long.parseLong(f.get("gcMillis")) / 10.0 / seconds,
        Long.parseLong(f.get("heapBytes")) / 1e6,
        Long.parseLong(f.get("baselineBytes")) / 1e6,
        Long.parseLong(f.get("calls")) / seconds,
        requestsPerSecond,
        hasNetwork ? window[0] / seconds : Double.NaN,
        Double.parseDouble(f.get("ramp")),
        Double.parseDouble(f.get("settle")),
        f.getOrDefault("problem", "").replace('_', ' '));
  }

  private static String join(String a, String b) {
    return a.isEmpty() ? b : a + "; " + b;
  }

  private static void stop(Process p) {
    if (!p.isAlive()) {
      return;
    }
    p.destroy();
    try {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
