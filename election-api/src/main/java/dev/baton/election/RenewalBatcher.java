package dev.baton.election;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Gathers the renewals of electors that share a store and hands them to {@link LeaseStore#renewAll}
 * together: one timer, one pool task and one store call per moment instead of one of each per
 * election, which is what lets one process lead thousands of elections.
 *
 * <p>A renewal is due at a moment and may be sent a little earlier (its slack), never later: a
 * lease renewed early is only safer. Renewals whose moments round down to the same slot go out
 * together, in chunks of the store's {@link LeaseStore#renewBatchLimit()} that run side by side.
 */
final class RenewalBatcher {

  /** What becomes of a renewal: called on the thread that made the store call. */
  interface Outcome {
    /**
     * @param startedNanos when the store call began, by the batcher's clock: the lease counts from
     *     no later than this
     */
    void arrived(Ticket ticket, long startedNanos, Renewal renewal);

    /**
     * The call carrying this renewal is still out at the renewal's deadline, or at an earlier
     * deadline of another renewal in the same call. Called on the timer thread; must not block.
     */
    void overdue(Ticket ticket);
  }

  /**
   * One elector's renewal, waiting for its slot until sent or cancelled. Once its outcome was
   * handed over, the same ticket may carry the elector's next renewal ({@link #renewAgain}): every
   * renewal of every election goes through here, and storing a new ticket into the elector's
   * long-lived state would cost the collector a card to scan each time.
   */
  static final class Ticket {
    private static final int WAITING = 0;
    private static final int SENT = 1;
    private static final int CANCELLED = 2;
    private static final int DONE = 3;

    // Written only while the ticket is in no slot and no call: new, or DONE.
    private Lease lease;
    private long deadlineNanos;

    private final Outcome outcome;
    private final AtomicInteger state = new AtomicInteger(WAITING);

    private Ticket(Lease lease, long deadlineNanos, Outcome outcome) {
      this.lease = lease;
      this.deadlineNanos = deadlineNanos;
      this.outcome = outcome;
    }

    /** True when the renewal had not been sent yet and now never will be (no outcome follows). */
    boolean cancel() {
      return state.compareAndSet(WAITING, CANCELLED);
    }

    /**
     * True once the renewal was sent and its outcome handed over: the ticket is in no slot and no
     * call any more, and may carry the next renewal. A cancelled ticket may still sit in its slot,
     * so it never comes back.
     */
    boolean reusable() {
      return state.get() == DONE;
    }

    private boolean send() {
      return state.compareAndSet(WAITING, SENT);
    }

    /** Hands {@code renewal} over; read nothing of the ticket after this but its outcome. */
    private void arrived(long startedNanos, Renewal renewal) {
      state.set(DONE);
      outcome.arrived(this, startedNanos, renewal);
    }
  }

  // One batcher per store and set of executors: electors built with their own scheduler, worker or
  // clock (tests do) keep to them. Weak so that a closed store and its batcher can be collected.
  private static final Map<LeaseStore, List<WeakReference<RenewalBatcher>>> SHARED =
      new WeakHashMap<>();

  static RenewalBatcher of(
      LeaseStore store, ScheduledExecutorService scheduler, Executor worker, MonotonicClock clock) {
    synchronized (SHARED) {
      List<WeakReference<RenewalBatcher>> batchers =
          SHARED.computeIfAbsent(store, s -> new ArrayList<>());
      batchers.removeIf(ref -> ref.get() == null);
      for (WeakReference<RenewalBatcher> ref : batchers) {
        RenewalBatcher b = ref.get();
        if (b != null && b.scheduler == scheduler && b.worker == worker && b.clock == clock) {
          return b;
        }
      }
      RenewalBatcher b = new RenewalBatcher(store, scheduler, worker, clock);
      batchers.add(new WeakReference<>(b));
      return b;
    }
  }

  private static final String EXECUTOR_REFUSED = "the executor refused the renewal";

  private final LeaseStore store;
  private final ScheduledExecutorService scheduler;
  private final Executor worker;
  private final MonotonicClock clock;
  private final int limit;
  private final Map<Long, List<Ticket>> slots = new HashMap<>();

  private RenewalBatcher(
      LeaseStore store, ScheduledExecutorService scheduler, Executor worker, MonotonicClock clock) {
    this.store = store;
    this.scheduler = scheduler;
    this.worker = worker;
    this.clock = clock;
    this.limit = store.renewBatchLimit();
  }

  /**
   * Renews {@code lease} at {@code dueNanos} or up to {@code slackNanos} before, then reports to
   * {@code outcome} unless the returned ticket is cancelled first. {@code deadlineNanos} is when
   * the caller must hear back at the latest; it must not be before {@code dueNanos}.
   */
  Ticket renew(Lease lease, long dueNanos, long slackNanos, long deadlineNanos, Outcome outcome) {
    return enqueue(new Ticket(lease, deadlineNanos, outcome), dueNanos, slackNanos);
  }

  /**
   * As {@link #renew}, on a ticket whose last renewal's outcome was handed over ({@link
   * Ticket#reusable()}), for the same outcome.
   */
  Ticket renewAgain(Ticket done, Lease lease, long dueNanos, long slackNanos, long deadlineNanos) {
    if (!done.reusable()) {
      throw new IllegalStateException("the ticket's last renewal is still waiting or out");
    }
    if (done.lease != lease) {
      done.lease = lease;
    }
    done.deadlineNanos = deadlineNanos;
    // The volatile write publishes the two fields to the thread that sends the ticket.
    done.state.set(Ticket.WAITING);
    return enqueue(done, dueNanos, slackNanos);
  }

  private Ticket enqueue(Ticket ticket, long dueNanos, long slackNanos) {
    long early = slackNanos > 0 ? dueNanos - Math.floorMod(dueNanos, slackNanos) : dueNanos;
    // Early must not mean at once: a retry close to its deadline waits as long as it asked.
    long slot = early - clock.nanoTime() > 0 ? early : dueNanos;
    boolean first;
    synchronized (slots) {
      List<Ticket> waiting = slots.get(slot);
      first = waiting == null;
      if (first) {
        waiting = new ArrayList<>();
        slots.put(slot, waiting);
      }
      waiting.add(ticket);
    }
    if (first) {
      long delay = Math.max(0, slot - clock.nanoTime());
      try {
        scheduler.schedule(
            () -> hand(() -> send(slot), () -> refuse(takeSlot(slot), EXECUTOR_REFUSED, null)),
            delay,
            TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        // No timer will send this slot. This renewal is dropped (the caller hears of it now);
        // any other that joined the slot meanwhile fails, so that none waits in it for ever.
        ticket.cancel();
        List<Ticket> joined = takeSlot(slot);
        if (joined != null) {
          refuse(joined, "the scheduler refused the renewal's timer", e);
        }
        throw e;
      }
    }
    return ticket;
  }

  private List<Ticket> takeSlot(long slot) {
    synchronized (slots) {
      return slots.remove(slot);
    }
  }

  /**
   * Hands {@code task} to the worker pool; when the pool refuses it (bounded and full, shut down,
   * no thread to be had), {@code refused} runs here instead: a renewal that cannot be sent must
   * fail at once, so its leader hears of it and keeps its deadline, rather than wait for ever.
   */
  private void hand(Runnable task, Runnable refused) {
    try {
      worker.execute(task);
    } catch (RejectedExecutionException | OutOfMemoryError e) {
      refused.run();
    }
  }

  /** Fails each of {@code tickets} not sent yet, as sent and answered with {@code why}. */
  private void refuse(List<Ticket> tickets, String why, Throwable cause) {
    List<Ticket> sent = new ArrayList<>(tickets.size());
    for (Ticket t : tickets) {
      if (t.send()) {
        sent.add(t);
      }
    }
    failSent(sent, why, cause);
  }

  /** Answers each of {@code sent} with a failure: {@code why}, caused by {@code cause} if any. */
  private void failSent(List<Ticket> sent, String why, Throwable cause) {
    long now = clock.nanoTime();
    for (Ticket t : sent) {
      t.arrived(now, Renewal.failed(new LeaseStoreException(t.lease.election(), why, cause)));
    }
  }

  private void send(long slot) {
    List<Ticket> due = takeSlot(slot);
    List<Ticket> batch = new ArrayList<>(Math.min(due.size(), limit));
    for (Ticket t : due) {
      if (!t.send()) {
        continue;
      }
      batch.add(t);
      if (batch.size() == limit) {
        List<Ticket> full = batch;
        hand(() -> renewAll(full), () -> failSent(full, EXECUTOR_REFUSED, null));
        batch = new ArrayList<>(limit);
      }
    }
    if (!batch.isEmpty()) {
      renewAll(batch);
    }
  }

  private void renewAll(List<Ticket> batch) {
    List<Lease> leases = new ArrayList<>(batch.size());
    long deadline = 0;
    for (Ticket t : batch) {
      leases.add(t.lease);
      if (leases.size() == 1 || t.deadlineNanos - deadline < 0) {
        deadline = t.deadlineNanos;
      }
    }
    long started = clock.nanoTime();
    // One timer per call, not per lease: a call that hangs past a deadline must not hold up a
    // leader's stepping down.
    ScheduledFuture<?> watchdog;
    try {
      watchdog =
          scheduler.schedule(
              () -> batch.forEach(t -> t.outcome.overdue(t)),
              Math.max(0, deadline - started),
              TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // Not sent unwatched: each leader hears of the failure and times its deadline itself.
      failSent(batch, "the scheduler refused the renewal's watchdog", e);
      return;
    }
    List<Renewal> renewals;
    try {
      renewals = store.renewAll(leases);
      if (renewals.size() != leases.size()) {
        throw new IllegalStateException(
            store.describe()
                + " answered "
                + renewals.size()
                + " renewals for "
                + leases.size()
                + " leases");
      }
    } catch (RuntimeException | Error e) {
      watchdog.cancel(false);
      for (Ticket t : batch) {
        t.arrived(started, Renewal.failed(asStoreFailure(t.lease, e)));
      }
      if (e instanceof Error) {
        throw (Error) e;
      }
      return;
    }
    watchdog.cancel(false);
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).arrived(started, renewals.get(i));
    }
  }

  private static RuntimeException asStoreFailure(Lease lease, Throwable e) {
    if (e instanceof LeaseStoreException) {
      return (LeaseStoreException) e;
    }
    return new LeaseStoreException(lease.election(), "batched renewal failed", e);
  }
}
