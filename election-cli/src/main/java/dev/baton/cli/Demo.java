package dev.baton.cli;

import dev.baton.election.ElectionListener;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.Term;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * {@code elect demo}: three candidates in this process, each with its own store on the embedded
 * default's lease files, and a narration of what happens to them: the first election, a crash of
 * the leader (no release), and a graceful handover, with how long each took.
 */
final class Demo {

  static final Duration LEASE = Duration.ofSeconds(3);
  static final Duration RENEW_DEADLINE = Duration.ofSeconds(2);
  static final Duration RETRY = Duration.ofMillis(500);
  private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration LEAD_A_WHILE = Duration.ofMillis(1500);

  private final PrintStream out;
  private final BlockingQueue<Elected> elections = new LinkedBlockingQueue<>();
  private final long start = System.nanoTime();

  private Demo(PrintStream out) {
    this.out = out;
  }

  private record Elected(String node, long token, long nanos) {}

  private record Node(String name, CrashableLeaseStore store, Elector elector) {}

  private record Row(String event, String leader, long token, Duration took, String against) {}

  /** Thrown when a step of the demo did not happen in time; the demo then fails with status 1. */
  private static final class StepMissing extends Exception {
    private static final long serialVersionUID = 1L;

    StepMissing(String message) {
      super(message);
    }
  }

  static int run(Path workingDirectory, PrintStream out) {
    // The narration says what happens; the electors' own INFO lines would say it twice. Set before
    // the first of their loggers exists.
    System.setProperty("org.slf4j.simpleLogger.log.dev.baton", "warn");
    return new Demo(out).run(workingDirectory);
  }

  private int run(Path workingDirectory) {
    Properties p = new Properties();
    p.setProperty(ElectionProperties.LEASE_DURATION, LEASE.toMillis() + "ms");
    p.setProperty(ElectionProperties.RENEW_DEADLINE, RENEW_DEADLINE.toMillis() + "ms");
    p.setProperty(ElectionProperties.RETRY_PERIOD, RETRY.toMillis() + "ms");
    String election =
        "demo-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff));
    // The demo always runs on the embedded default, whatever ELECTION_* variables say.
    ElectionConfig config =
        ElectionConfig.resolve(ElectionProperties.of(p), Optional.of(election), workingDirectory);

    out.println("elect demo: leader election among three candidates on the embedded default");
    out.println("  backend    " + config.describeBackend());
    out.println(
        "  election   "
            + election
            + "; candidates node-1, node-2, node-3, in this process, each with its own store");
    out.println(
        "  timing     lease "
            + Durations.format(LEASE)
            + ", renew deadline "
            + Durations.format(RENEW_DEADLINE)
            + ", retry "
            + Durations.format(RETRY)
            + " (shortened for the demo; the defaults are 15s, 10s, 2s)");
    out.println();

    List<Node> nodes = new ArrayList<>();
    List<Row> rows = new ArrayList<>();
    try {
      for (int i = 1; i <= 3; i++) {
        String name = "node-" + i;
        CrashableLeaseStore store = new CrashableLeaseStore(config.openStore());
        nodes.add(
            new Node(
                name,
                store,
                Elector.builder(store)
                    .configure(config.properties())
                    .candidate(name)
                    .listener(recorder(name))
                    .build()));
      }
      say("node-1, node-2 and node-3 start campaigning");
      long campaignAt = System.nanoTime();
      nodes.forEach(n -> n.elector().start());
      Elected first = awaitElected(Set.of(), "a first leader");
      Duration firstTook = Duration.ofNanos(first.nanos() - campaignAt);
      say(
          first.node()
              + " is elected with fencing token "
              + first.token()
              + ", "
              + Durations.format(firstTook)
              + " after the campaign began (the first write to disk included)");
      rows.add(new Row("first election", first.node(), first.token(), firstTook, "-"));

      pause(LEAD_A_WHILE);
      Node crashed = node(nodes, first.node());
      long crashAt = System.nanoTime();
      crashed.store().crash();
      crashed.elector().close();
      say(
          crashed.name()
              + " crashes: it stops writing, it releases nothing; its lease stays until it expires on the host's clock");
      Elected second = awaitElected(Set.of(crashed.name()), "a new leader after the crash");
      Duration failover = Duration.ofNanos(second.nanos() - crashAt);
      say(
          second.node()
              + " is elected with fencing token "
              + second.token()
              + ": failover took "
              + Durations.format(failover)
              + " (the lease is "
              + Durations.format(LEASE)
              + " from the last renewal; followers try again within "
              + Durations.format(RETRY)
              + ")");
      rows.add(
          new Row(
              "crash failover",
              second.node(),
              second.token(),
              failover,
              "lease " + Durations.format(LEASE) + " + retry " + Durations.format(RETRY)));

      pause(LEAD_A_WHILE);
      Node handing = node(nodes, second.node());
      long handAt = System.nanoTime();
      say(handing.name() + " shuts down gracefully: it stops leading and releases its lease");
      handing.elector().close();
      Elected third =
          awaitElected(Set.of(crashed.name(), handing.name()), "a leader after the handover");
      Duration handover = Duration.ofNanos(third.nanos() - handAt);
      say(
          third.node()
              + " is elected with fencing token "
              + third.token()
              + ": handover took "
              + Durations.format(handover)
              + " (the followers poll the lease files, so one noticed at its next try, within "
              + Durations.format(RETRY)
              + ")");
      rows.add(
          new Row(
              "graceful handover",
              third.node(),
              third.token(),
              handover,
              "retry " + Durations.format(RETRY) + " (polling)"));
    } catch (StepMissing e) {
      out.println();
      out.println("elect demo: " + e.getMessage());
      return 1;
    } finally {
      nodes.forEach(n -> n.elector().close());
      nodes.forEach(n -> n.store().close());
    }
    out.println();
    table(rows);
    out.println();
    out.println(
        "Each new term got a higher fencing token ("
            + rows.get(0).token()
            + " < "
            + rows.get(1).token()
            + " < "
            + rows.get(2).token()
            + "): a resource that keeps the highest token it has seen refuses the writes of a leader that was cut off.");
    out.println(
        "Try it with processes: run this in three terminals, then stop or kill the one that leads:");
    out.println(
        "  ./bin/elect run --name try -- sh -c 'echo \"leading with token $BATON_FENCING_TOKEN\"; exec sleep 600'");
    return 0;
  }

  private ElectionListener recorder(String node) {
    return new ElectionListener() {
      @Override
      public void onElected(Term term) {
        elections.add(new Elected(node, term.token().value(), System.nanoTime()));
      }
    };
  }

  private Elected awaitElected(Set<String> excluded, String what) throws StepMissing {
    long deadline = System.nanoTime() + STEP_TIMEOUT.toNanos();
    try {
      while (true) {
        Elected e = elections.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (e == null) {
          throw new StepMissing(
              "no "
                  + what
                  + " within "
                  + Durations.format(STEP_TIMEOUT)
                  + "; is the disk under "
                  + Path.of(".baton").toAbsolutePath()
                  + " writable?");
        }
        if (!excluded.contains(e.node())) {
          return e;
        }
      }
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw new StepMissing("interrupted while waiting for " + what);
    }
  }

  private static Node node(List<Node> nodes, String name) {
    return nodes.stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
  }

  private void say(String what) {
    out.printf("%8s  %s%n", ms(System.nanoTime() - start), what);
    out.flush();
  }

  private static String ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos) + " ms";
  }

  /** Lets a leader lead for a moment, so the narration follows at a human pace. */
  private static void pause(Duration d) throws StepMissing {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StepMissing("interrupted");
    }
  }

  private void table(List<Row> rows) {
    String format = "  %-18s  %-7s  %-6s  %-9s  %s%n";
    out.printf(format, "event", "leader", "token", "took", "bound");
    for (Row r : rows) {
      out.printf(format, r.event(), r.leader(), r.token(), Durations.format(r.took()), r.against());
    }
  }
}
