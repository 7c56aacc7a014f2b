package dev.baton.benchmarks;

import dev.baton.election.ElectionListener;
import dev.baton.election.Elector;
import dev.baton.election.MemoryLeaseStore;
import dev.baton.election.Term;
import dev.baton.etcd.EtcdLeaseStore;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;

/**
 * The process of the scale measurement, started by {@link ScaleDriver}: one store, and for each
 * size N electors of N elections (one candidate each) on it. For each size it ramps the electors
 * up, waits until all lead and the JIT compiler has gone quiet, moves what they keep to the old
 * generation (a full collection), watches them for the window, and reports on standard output:
 *
 * <pre>
 * WINDOW-START n          (the driver snapshots the server's and the proxy's counters)
 * WINDOW-END n
 * STEP elections=... elected=... stepDowns=... cpuMillis=... jitMillis=(compiler threads' CPU) gcMillis=... seconds=... heapBytes=... baselineBytes=...
 *      calls=... requests=... ramp=... settle=... problem=...
 * </pre>
 *
 * Arguments: backend, proxy port (0 for memory), sizes (comma-separated), window millis, settle
 * limit millis, run id.
 */
public final class ScaleRun {

  private ScaleRun() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    String backend = args[0];
    int port = Integer.parseInt(args[1]);
    List<Integer> sizes = new ArrayList<>();
    for (String n : args[2].split(",")) {
      sizes.add(Integer.parseInt(n));
    }
    Duration window = Duration.ofMillis(Long.parseLong(args[3]));
    Duration settleLimit = Duration.ofMillis(Long.parseLong(args[4]));
    String runId = args[5];
    PrintStream out = System.out;
    try {
      new ScaleRun.Steps(backend, port, window, settleLimit, runId, out).run(sizes);
    } catch (Exception | Error e) {
      out.println("FAILED " + oneLine(e.toString()));
      out.flush();
      throw e;
    } finally {
      out.flush();
      System.exit(0);
    }
  }

  static String oneLine(String s) {
    return s.replaceAll("[\\r\\n]+", " ");
  }

  private static final class Steps {
    private final String backend;
    private final int port;
    private final Duration window;
    private final Duration settleLimit;
    private final String runId;
    private final PrintStream out;
    private static final Duration BATCH_LIMIT = Duration.ofSeconds(15);

    /** Linux's USER_HZ, the unit of /proc's CPU times: 100 on every common kernel. */
    private static final long CLOCK_TICKS_PER_SECOND = 100;

    /** A compiler this busy or less (1 % of a core) counts as quiet. */
    private static final long QUIET_COMPILATION_MILLIS_PER_SECOND = 10;

    /**
     * gRPC and netty code compiles in bursts a second or two apart: one quiet second is not enough.
     */
    private static final int QUIET_SECONDS = 3;

    private final Settings settings = Settings.full();

    Steps(
        String backend,
        int port,
        Duration window,
        Duration settleLimit,
        String runId,
        PrintStream out) {
      this.backend = backend;
      this.port = port;
      this.window = window;
      this.settleLimit = settleLimit;
      this.runId = runId;
      this.out = out;
    }

    void run(List<Integer> sizes) throws Exception {
      InetSocketAddress through = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
      BatonContender.OpenedStore opened = open(through);
      RecordingStore store = new RecordingStore(opened.store());
      LongSupplier requests = opened.requests().orElse(store::calls);
      MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
      // A first call, so that the connection and the classes are there before the baseline. The
      // first call of a fresh JVM can outlast the call timeout (class loading, TLS-free gRPC
      // set-up).
      warmUp(store);
      long baseline = usedHeapAfterGc(memory);
      try {
        for (int i = 0; i < sizes.size(); i++) {
          // After the last step the process exits: its elections need not be released one by one
          // (on a saturated store that alone takes minutes); their leases expire.
          step(sizes.get(i), store, requests, memory, baseline, i == sizes.size() - 1);
        }
      } finally {
        store.close();
        if (opened.resources() != null) {
          opened.resources().close();
        }
      }
    }

    private void warmUp(RecordingStore store) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (true) {
        try {
          store.read("scale-" + runId + "-warmup");
          return;
        } catch (RuntimeException e) {
          if (System.nanoTime() - deadline > 0) {
            throw e;
          }
          Pause.millis(200);
        }
      }
    }

    private BatonContender.OpenedStore open(InetSocketAddress through) {
      switch (backend) {
        case "memory":
          return new BatonContender.OpenedStore(
              new MemoryLeaseStore(), null, Optional.empty(), Optional.empty());
        case "h2":
          return Backends.openJdbc(Backends.h2Url(port), "sa", settings);
        case "postgresql":
          return Backends.openJdbc(Servers.postgresUrl(port), Servers.POSTGRES_USER, settings);
        case "mariadb":
          return Backends.openJdbc(Servers.mariadbUrl(port), Servers.MARIADB_USER, settings);
        case "zookeeper":
          CuratorFramework client = Backends.curatorForBaton(through, settings.leaseDuration());
          return new BatonContender.OpenedStore(
              Backends.zooKeeperStore(client, settings),
              client,
              Optional.empty(),
              Optional.empty());
        case "etcd":
          return Backends.openEtcd(through, settings, true, EtcdLeaseStore.DEFAULT_MAX_TXN_OPS);
        case "etcd-max-txn-ops":
          return Backends.openEtcd(through, settings, true, EtcdServer.MAX_TXN_OPS);
        case "kubernetes":
          return Backends.openKubernetes(through, "scale-" + runId, settings, Optional.empty());
        default:
          throw new IllegalArgumentException(
              "backend must be memory, h2, postgresql, mariadb, zookeeper, etcd, etcd-max-txn-ops or kubernetes, but was "
                  + backend);
      }
    }

    private void step(
        int n,
        RecordingStore store,
        LongSupplier requests,
        MemoryMXBean memory,
        long baseline,
        boolean last)
        throws Exception {
      AtomicInteger leading = new AtomicInteger();
      AtomicLong revocations = new AtomicLong();
      ElectionListener listener =
          new ElectionListener() {
            @Override
            public void onElected(Term term) {
              leading.incrementAndGet();
            }

            @Override
            public void onRevoked(Term term) {
              leading.decrementAndGet();
              revocations.incrementAndGet();
            }
          };
      List<Elector> electors = new ArrayList<>(n);
      String problem = "";
      long rampStart = System.nanoTime();
      try {
        // In batches, as a process would start its elections, not ten thousand calls at once.
        int batch = Math.max(1, Math.min(250, n / 20));
        Duration rampLimit = Duration.ofSeconds(30).plusMillis(n * 5L);
        long rampDeadline = rampStart + rampLimit.toNanos();
        for (int i = 0; i < n; i++) {
          Elector e =
              Elector.builder(store)
                  .election("scale-" + runId + "-" + n + "-" + i)
                  .candidate("scale-" + runId)
                  .leaseDuration(settings.leaseDuration())
                  .renewDeadline(settings.renewDeadline())
                  .retryPeriod(settings.retryPeriod())
                  .listener(listener)
                  .build();
          electors.add(e);
          e.start();
          if ((i + 1) % batch == 0 || i == n - 1) {
            int started = i + 1;
            // A batch that does not lead within a few leases will not: the store is saturated.
            Duration left =
                Duration.ofNanos(
                    Math.max(0, Math.min(rampDeadline - System.nanoTime(), BATCH_LIMIT.toNanos())));
            if (!Pause.until(() -> leading.get() >= started, left)) {
              problem =
                  "ramp-up stopped: only "
                      + leading.get()
                      + " of "
                      + started
                      + " started elections led (a batch gets "
                      + BATCH_LIMIT.toSeconds()
                      + " s, the whole ramp-up "
                      + rampLimit.toSeconds()
                      + " s)";
              break;
            }
          }
        }
        double rampSeconds = (System.nanoTime() - rampStart) / 1e9;
        Pause.of(settings.retryPeriod().multipliedBy(2));
        double settleSeconds = settleCompiler();
        // Everything the elections keep is moved to the old generation first, as in a process
        // that has led them for hours. Otherwise a young heap can hold them through the whole
        // window, and the window misses what the collector's write barrier and concurrent
        // refinement cost for every reference a renewal stores into a long-lived object.
        System.gc();
        Pause.of(settings.retryPeriod());
        int elected = leading.get();
        long revokedBefore = revocations.get();
        long callsBefore = store.calls();
        long requestsBefore = requests.getAsLong();
        long jitBefore = compilerCpuMillis();
        long gcBefore = collectionMillis();
        long cpuBefore = processCpuNanos();
        long t0 = System.nanoTime();
        out.println("WINDOW-START " + n);
        out.flush();
        Pause.of(window);
        long t1 = System.nanoTime();
        long cpu = processCpuNanos() - cpuBefore;
        long jit = compilerCpuMillis() - jitBefore;
        long gc = collectionMillis() - gcBefore;
        long calls = store.calls() - callsBefore;
        long reqs = requests.getAsLong() - requestsBefore;
        long stepDowns = revocations.get() - revokedBefore;
        out.println("WINDOW-END " + n);
        out.flush();
        long heap = usedHeapAfterGc(memory);
        out.println(
            String.format(
                Locale.ROOT,
                "STEP elections=%d elected=%d stepDowns=%d cpuMillis=%d jitMillis=%d gcMillis=%d seconds=%.3f heapBytes=%d baselineBytes=%d calls=%d requests=%d"
                    + " ramp=%.2f settle=%.1f problem=%s",
                n,
                elected,
                stepDowns,
                cpu / 1_000_000,
                jit,
                gc,
                (t1 - t0) / 1e9,
                heap,
                baseline,
                calls,
                reqs,
                rampSeconds,
                settleSeconds,
                problem.replace(' ', '_')));
        out.flush();
      } finally {
        if (!last) {
          closeAll(electors);
        }
      }
    }

    private static void closeAll(List<Elector> electors) throws InterruptedException {
      ExecutorService closers = Executors.newFixedThreadPool(16);
      for (Elector e : electors) {
        closers.execute(e::close);
      }
      closers.shutdown();
      if (!closers.awaitTermination(120, TimeUnit.SECONDS)) {
        closers.shutdownNow();
      }
    }

    /**
     * Waits, at most {@link #settleLimit}, until the JIT compiler has gone quiet: right after a
     * ramp-up it is still compiling the code paths the new elections brought in, a one-off cost of
     * a fresh process that would otherwise be counted as the cost of keeping N elections.
     *
     * @return how long it waited, in seconds
     */
    private double settleCompiler() {
      long start = System.nanoTime();
      long deadline = start + settleLimit.toNanos();
      int quietSeconds = 0;
      long last = compilationMillis();
      while (quietSeconds < QUIET_SECONDS && System.nanoTime() - deadline < 0) {
        Pause.of(Duration.ofSeconds(1));
        long now = compilationMillis();
        quietSeconds = now - last <= QUIET_COMPILATION_MILLIS_PER_SECOND ? quietSeconds + 1 : 0;
        last = now;
      }
      return (System.nanoTime() - start) / 1e9;
    }

    /** Time the JIT compiler spent so far, as the JVM reports it (-1 when it does not). */
    private static long compilationMillis() {
      CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
      return jit != null && jit.isCompilationTimeMonitoringSupported()
          ? jit.getTotalCompilationTime()
          : -1;
    }

    /**
     * CPU time the JIT compiler's threads used so far, from /proc (the JVM hides them from its
     * thread beans); the compiler's elapsed time, as the JVM reports it, where /proc cannot tell.
     * gRPC and netty paths that run a hundred times a second take minutes to reach the optimising
     * compiler, so a fresh process still compiles in the window; the report shows that apart.
     */
    private static long compilerCpuMillis() {
      Path tasks = Path.of("/proc/self/task");
      if (!Files.isDirectory(tasks)) {
        return compilationMillis();
      }
      long ticks = 0;
      try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
        for (Path thread : threads) {
          try {
            String comm = Files.readString(thread.resolve("comm")).trim();
            if (!comm.matches("C[12] CompilerThre.*")) {
              continue;
            }
            String stat = Files.readString(thread.resolve("stat"));
            // Fields after the command's closing parenthesis; utime and stime are the 12th and
            // 13th.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
          } catch (IOException | RuntimeException gone) {
            // A compiler thread that ended between the listing and the read used nothing more.
          }
        }
      } catch (IOException e) {
        return compilationMillis();
      }
      return ticks * 1000 / CLOCK_TICKS_PER_SECOND;
    }

    /** Time the garbage collectors spent so far. */
    private static long collectionMillis() {
      long total = 0;
      for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
        total += Math.max(0, gc.getCollectionTime());
      }
      return total;
    }

    private static long usedHeapAfterGc(MemoryMXBean memory) {
      for (int i = 0; i < 3; i++) {
        System.gc();
      }
      return memory.getHeapMemoryUsage().getUsed();
    }

    private static long processCpuNanos() {
      if (ManagementFactory.getOperatingSystemMXBean()
          instanceof com.sun.management.OperatingSystemMXBean os) {
        return os.getProcessCpuTime();
      }
      return -1;
    }
  }
}
