package dev.baton.cli;

import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Subscription;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * {@code elect status}: who holds the election, with which fencing token, how recently it renewed,
 * and on which backend; with {@code --watch}, one line per change until interrupted.
 */
final class StatusCommand {

  /** Exit status when nobody holds a live lease. */
  static final int NO_LEADER = 1;

  private static final Duration POLL = Duration.ofSeconds(1);

  /**
   * A lease that vanished this long or more before it was due to expire was released; later, it
   * expired. Leaves room for the difference in latency of two reads; a live leader renews long
   * before its lease is this close to its end.
   */
  private static final Duration EXPIRY_SLACK = Duration.ofMillis(500);

  /** How the previous holder's lease ended, as far as a reader can tell. */
  enum Ending {
    RELEASED,
    EXPIRED,
    UNKNOWN
  }

  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

  private StatusCommand() {}

  static int run(Arguments.Status args, Path workingDirectory, PrintStream out, PrintStream err) {
    ElectionConfig config = ElectionConfig.load(args.config(), args.name(), workingDirectory);
    String election = config.election();
    LeaseStore store = config.openStore();
    // An embedded database served from this process must be closed, not dropped, when Ctrl-C
    // ends a watch: the other processes then take it over without waiting for a dead server.
    ClosingOnExit closing = new ClosingOnExit(store);
    Runtime.getRuntime().addShutdownHook(closing);
    try {
      Optional<LeaseRecord> current = store.read(election);
      if (args.output() == Arguments.Output.JSON) {
        out.println(
            StatusJson.of(
                election,
                config.properties().get(ElectionProperties.BACKEND),
                store.describe(),
                current));
        out.flush();
      } else {
        print(out, election, current, store.describe());
      }
      if (!args.watch()) {
        return current.isPresent() ? 0 : NO_LEADER;
      }
      watch(store, election, current, closing, out, err);
      return 0;
    } finally {
      if (!closing.started) {
        Runtime.getRuntime().removeShutdownHook(closing);
        store.close();
      }
    }
  }

  /** Closes the store when the JVM exits during a watch; the watch loop then ends quietly. */
  private static final class ClosingOnExit extends Thread {
    private final LeaseStore store;
    volatile boolean started;

    ClosingOnExit(LeaseStore store) {
      super("elect-status-close");
      this.store = store;
    }

    @Override
    public void run() {
      started = true;
      store.close();
    }
  }

  static void print(
      PrintStream out, String election, Optional<LeaseRecord> current, String backend) {
    out.println("election  " + election);
    if (current.isEmpty()) {
      out.println("leader    none: nobody holds a live lease");
    } else {
      LeaseRecord r = current.get();
      out.println("leader    " + r.holder());
      out.println("token     " + r.token());
      out.println("renewed   " + renewed(r));
      r.expiresIn()
          .ifPresent(
              e ->
                  out.println(
                      "expires   in "
                          + Durations.format(e)
                          + " unless renewed (lease "
                          + Durations.format(r.ttl())
                          + ")"));
    }
    out.println("backend   " + backend);
    out.flush();
  }

  /**
   * How long ago, from the store's own judgement (its TTL minus the time it says is left), so that
   * no clock of this machine is compared with the store's; the store's timestamp for reference.
   */
  static String renewed(LeaseRecord r) {
    String at = r.renewedAt().map(t -> "at " + t + " by the store's clock").orElse("");
    if (r.expiresIn().isPresent()) {
      Duration ago = r.ttl().minus(r.expiresIn().get());
      return Durations.format(ago.isNegative() ? Duration.ZERO : ago)
          + " ago"
          + (at.isEmpty() ? "" : " (" + at + ")");
    }
    return at.isEmpty() ? "unknown (the store does not say)" : at;
  }

  private static void watch(
      LeaseStore store,
      String election,
      Optional<LeaseRecord> first,
      ClosingOnExit closing,
      PrintStream out,
      PrintStream err) {
    Semaphore wake = new Semaphore(0);
    Optional<Subscription> subscription;
    try {
      subscription = store.watch(election, wake::release);
    } catch (LeaseStoreException e) {
      subscription = Optional.empty();
    }
    out.println(
        "watching"
            + (subscription.isPresent()
                ? " (the store reports changes; also reading every "
                : " (reading every ")
            + Durations.format(POLL)
            + "); Ctrl-C to stop");
    out.flush();
    Optional<LeaseRecord> last = first;
    long lastReadAt = System.nanoTime();
    boolean failing = false;
    try {
      while (!closing.started) {
        try {
          wake.tryAcquire(POLL.toMillis(), TimeUnit.MILLISECONDS);
          wake.drainPermits();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        Optional<LeaseRecord> now;
        long readAt = System.nanoTime();
        try {
          now = store.read(election);
        } catch (LeaseStoreException | IllegalStateException e) {
          if (closing.started) {
            return;
          }
          if (!failing) {
            err.println(
                LocalTime.now().format(CLOCK) + "  cannot read the election: " + e.getMessage());
            failing = true;
          }
          continue;
        }
        if (failing) {
          err.println(LocalTime.now().format(CLOCK) + "  the store answers again");
          failing = false;
        }
        if (!sameTerm(last, now)) {
          out.println(
              LocalTime.now().format(CLOCK)
                  + "  "
                  + change(last, now, ending(last, lastReadAt, readAt)));
          out.flush();
        }
        last = now;
        lastReadAt = readAt;
      }
    } finally {
      subscription.ifPresent(Subscription::close);
    }
  }

  private static boolean sameTerm(Optional<LeaseRecord> a, Optional<LeaseRecord> b) {
    if (a.isEmpty() || b.isEmpty()) {
      return a.isEmpty() == b.isEmpty();
    }
    return Objects.equals(a.get().holder(), b.get().holder())
        && a.get().token().equals(b.get().token());
  }

  /**
   * Released or expired, judged by when the previous holder's lease was due to expire, from what
   * the store said was left at the last read that saw it ({@code beforeReadAt}, on this process's
   * monotonic clock: no other machine's clock is involved). Gone well before that: released. Gone
   * after, seen by reads that came regularly: expired. After a gap in the reads (the store did not
   * answer), it cannot be told.
   */
  static Ending ending(Optional<LeaseRecord> before, long beforeReadAt, long nowReadAt) {
    if (before.isEmpty() || before.get().expiresIn().isEmpty()) {
      return Ending.UNKNOWN;
    }
    long due = beforeReadAt + before.get().expiresIn().get().toNanos();
    if (nowReadAt - (due - EXPIRY_SLACK.toNanos()) < 0) {
      return Ending.RELEASED;
    }
    return nowReadAt - beforeReadAt <= POLL.plus(EXPIRY_SLACK).toNanos()
        ? Ending.EXPIRED
        : Ending.UNKNOWN;
  }

  static String change(Optional<LeaseRecord> before, Optional<LeaseRecord> now, Ending ending) {
    if (before.isEmpty()) {
      return now.map(r -> "leader " + r.holder() + ", token " + r.token() + " (nobody led)")
          .orElse("no leader");
    }
    LeaseRecord b = before.get();
    String was = "was " + b.holder() + ", token " + b.token();
    String how =
        switch (ending) {
          case RELEASED -> "was released";
          case EXPIRED -> "expired, not renewed within its lease of " + Durations.format(b.ttl());
          case UNKNOWN -> "was released or expired";
        };
    if (now.isEmpty()) {
      return "no leader: the lease " + how + " (" + was + ")";
    }
    return "leader "
        + now.get().holder()
        + ", token "
        + now.get().token()
        + " ("
        + was
        + (ending == Ending.UNKNOWN ? "" : "; " + how.replaceFirst("^was ", ""))
        + ")";
  }
}
