package dev.baton.election;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;

/**
 * How a leader's renewals reach the store: one call per renewal ({@link Direct}), or gathered with
 * the renewals of other electors on the same store into {@link LeaseStore#renewAll} calls ({@link
 * Batched}). Either way every outcome goes to the {@link Leading} phase that asked, which decides
 * whether it is current or late. Confined to the engine executor, like the phase.
 */
interface RenewalSchedule {

  /** Renews {@code lease} at {@code atNanos} (a batch may send it a little earlier). */
  void renewAt(Lease lease, long atNanos);

  /** Drops a renewal not sent yet; one already sent still reports its outcome. */
  void cancel();

  /** True when something other than the leader watches its calls against the renew deadline. */
  boolean watchesDeadline();

  /** A timer per renewal, and a call of its own. */
  final class Direct implements RenewalSchedule {
    private final Campaign c;
    private final Leading leading;
    private ScheduledFuture<?> timer;

    Direct(Campaign c, Leading leading) {
      this.c = c;
      this.leading = leading;
    }

    @Override
    public void renewAt(Lease lease, long atNanos) {
      cancel();
      timer =
          c.schedule(
              Duration.ofNanos(Math.max(0, atNanos - c.clock.nanoTime())), () -> renew(lease));
    }

    private void renew(Lease lease) {
      if (!leading.isActive() || leading.deadlinePassed()) {
        return;
      }
      long t0 = c.clock.nanoTime();
      c.call(() -> c.store.renew(lease), r -> leading.renewed(t0, r), leading::renewFailed);
    }

    @Override
    public void cancel() {
      Campaign.cancel(timer);
      timer = null;
    }

    @Override
    public boolean watchesDeadline() {
      return false;
    }
  }

  /**
   * A ticket with the store's {@link RenewalBatcher}. The batcher watches each call it makes
   * against the earliest renew deadline in it, so a leader needs no deadline timer of its own while
   * its renewals go through.
   */
  final class Batched implements RenewalSchedule, RenewalBatcher.Outcome {
    private final Campaign c;
    private final Leading leading;
    private final RenewalBatcher batcher;
    private RenewalBatcher.Ticket ticket;

    Batched(Campaign c, Leading leading, RenewalBatcher batcher) {
      this.c = c;
      this.leading = leading;
      this.batcher = batcher;
    }

    @Override
    public void renewAt(Lease lease, long atNanos) {
      cancel();
      // Counted as a call in flight from now on: an outcome may follow until the ticket is
      // cancelled.
      c.storeOpStarted();
      long slack = leading.renewSlackNanos();
      long deadline = leading.term().validUntilNanos();
      RenewalBatcher.Ticket last = ticket;
      try {
        if (last != null && last.reusable()) {
          // The usual case, a renewal after the last one's outcome: the same ticket, so that
          // nothing new is stored here.
          batcher.renewAgain(last, lease, atNanos, slack, deadline);
        } else {
          ticket = batcher.renew(lease, atNanos, slack, deadline, this);
        }
      } catch (RejectedExecutionException e) {
        c.storeOpEnded(); // the batcher dropped the ticket: no outcome will come
        throw e;
      }
    }

    @Override
    public void cancel() {
      // The ticket is kept: a sent one cannot be cancelled, and once its outcome is handed over
      // it carries the next renewal.
      RenewalBatcher.Ticket t = ticket;
      if (t != null && t.cancel()) {
        c.storeOpEnded();
      }
    }

    @Override
    public boolean watchesDeadline() {
      return true;
    }

    @Override
    public void arrived(RenewalBatcher.Ticket arrived, long startedNanos, Renewal outcome) {
      c.engine.runOrExecute(
          () ->
              c.handOver(
                  () -> {
                    if (outcome.isRenewed()) {
                      leading.renewed(startedNanos, outcome.leaseOrThrow());
                    } else {
                      leading.renewFailed(outcome.failure().orElseThrow());
                    }
                  }));
    }

    @Override
    public void overdue(RenewalBatcher.Ticket overdue) {
      c.engine.execute(leading::overdue);
    }
  }
}
