package dev.baton.zookeeper;

import dev.baton.election.MonotonicClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives back lease nodes whose holder stopped renewing them.
 *
 * <p>A ZooKeeper session outlives a stuck holder: the client's own thread keeps it alive however
 * long the elector above it hangs (a deadlock, a stalled executor), so the ephemeral lease node
 * would keep everyone else out for good. A lease in any other store runs out when it is not
 * renewed; this makes a ZooKeeper lease do the same. Each term is given back once its TTL has
 * passed since the start of the last grant or renewal that confirmed it, and no renewal is in
 * flight: the same moment until which the store promised the lease, so the give-back never cuts a
 * promised lease short. A renewal that comes after the term was given up is refused. Only leases of
 * the client's current session are given back: the node of a session the client has left ends when
 * the servers expire that session.
 *
 * <p>Timers run on {@link CompletableFuture#delayedExecutor}'s shared thread, one per slot of an
 * eighth of a second for all the terms due in it (at most one check per term is pending), and the
 * give-back is one asynchronous delete, conditional on the term like a release; nothing here
 * blocks.
 */
final class UnrenewedLeases {

  private static final Logger log = LoggerFactory.getLogger(UnrenewedLeases.class);

  /**
   * For delayed tasks of this store that only take a lock and send an asynchronous request (checks,
   * give-backs, deletes tried again): they run on the JDK's timer thread, not one of their own.
   */
  static final Executor ON_TIMER_THREAD = Runnable::run;

  /** How far apart the timers of {@link #after} are: an eighth of a second, far below any TTL. */
  private static final long SLOT_NANOS = TimeUnit.MILLISECONDS.toNanos(125);

  private final CuratorFramework client;
  private final Duration retryAfter;
  private final MonotonicClock clock;
  private final Map<Term, State> terms = new HashMap<>();

  /** Terms to check, by the end of the slot they are due in. */
  private final Map<Long, List<Term>> slots = new HashMap<>();

  private boolean closed;

  /**
   * One term of one election: the candidate's node and its version after the grant name it. The
   * election's name is enough to tell elections apart, since one store keeps them all under one
   * base path; comparing it is cheaper than comparing their paths, which matters at thousands of
   * renewals a second.
   *
   * <p>Its equals and hashCode are written out: a record's own go through method handles, which a
   * handover runs uncompiled, at about a tenth of a millisecond for a lookup on a two-core machine.
   */
  private record Term(String election, String node, int version) {

    @Override
    public boolean equals(Object o) {
      return o instanceof Term t
          && version == t.version
          && node.equals(t.node)
          && election.equals(t.election);
    }

    @Override
    public int hashCode() {
      return (election.hashCode() * 31 + node.hashCode()) * 31 + version;
    }
  }

  /**
   * What is known of one term. A renewal holds on to it from {@link #renewalStarts} to {@link
   * #renewalEnded}, so that it looks its term up once: with 10,000 terms each lookup is a few cache
   * misses, and a renewal used to make three.
   */
  static final class State {
    final Term term;
    final ElectionNodes nodes;
    final String candidate;
    final long sessionId;
    long expiresAtNanos;
    int renewals;
    boolean checkPending;
    boolean givenUp;

    /**
     * The term's node as the ZooKeeper handle sees it, made once: every renewal of the term looks
     * it up, and building it each time would cost thousands of strings a second at 10,000 leases.
     */
    final String rawPath;

    State(Term term, ElectionNodes nodes, String candidate, long sessionId, long expiresAtNanos) {
      this.term = term;
      this.nodes = nodes;
      this.candidate = candidate;
      this.sessionId = sessionId;
      this.expiresAtNanos = expiresAtNanos;
      this.rawPath = term == null ? null : nodes.rawChild(term.node());
    }

    /** The election's paths, which the renewal would otherwise look up as well. */
    ElectionNodes nodes() {
      return nodes;
    }
  }

  /** What {@link #renewalStarts} answers for a term this store gave back already. */
  static final State GIVEN_UP = new State(null, null, null, 0, 0);

  UnrenewedLeases(CuratorFramework client, Duration retryAfter, MonotonicClock clock) {
    this.client = client;
    this.retryAfter = retryAfter;
    this.clock = clock;
  }

  /**
   * A grant or renewal whose call started at {@code startNanos} confirmed the term for {@code ttl}.
   */
  void confirmed(
      ElectionNodes nodes, LeaseHandle handle, String candidate, long startNanos, Duration ttl) {
    Term term = new Term(nodes.election(), handle.node(), handle.version());
    long expiresAt = startNanos + ttl.toNanos();
    synchronized (this) {
      if (closed) {
        return;
      }
      State state = terms.get(term);
      if (state == null) {
        state = new State(term, nodes, candidate, handle.sessionId(), expiresAt);
        terms.put(term, state);
      } else if (state.givenUp) {
        return;
      } else if (expiresAt - state.expiresAtNanos > 0) {
        state.expiresAtNanos = expiresAt;
      }
      scheduleCheck(term, state);
    }
  }

  /**
   * A renewal of the term of {@code election} granted with {@code handle} begins; no give-back
   * starts until {@link #renewalEnded}. Answers the term's state, to be handed back to {@link
   * #renewalEnded}; {@link #GIVEN_UP} when the term was given up already; null when nothing is
   * known of the term (the renewal then reports a success through {@link #confirmed}).
   */
  synchronized State renewalStarts(String election, LeaseHandle handle) {
    State state = terms.get(new Term(election, handle.node(), handle.version()));
    if (state == null) {
      return null;
    }
    if (state.givenUp) {
      return GIVEN_UP;
    }
    state.renewals++;
    return state;
  }

  /**
   * The renewal that {@link #renewalStarts} announced with {@code state} returned or failed: it
   * confirmed the term until {@code confirmedUntilNanos} when {@code confirmed}; it learned the
   * term is lost when {@code lost}.
   */
  synchronized void renewalEnded(
      State state, boolean confirmed, long confirmedUntilNanos, boolean lost) {
    if (closed || state.renewals == 0) {
      return;
    }
    state.renewals--;
    if (state.givenUp) {
      return;
    }
    if (lost) {
      terms.remove(state.term, state);
      return;
    }
    if (confirmed && confirmedUntilNanos - state.expiresAtNanos > 0) {
      state.expiresAtNanos = confirmedUntilNanos;
    }
    scheduleCheck(state.term, state);
  }

  /** The holder released the term, or learned it is lost: nothing to give back. */
  synchronized void ended(ElectionNodes nodes, LeaseHandle handle) {
    Term term = new Term(nodes.election(), handle.node(), handle.version());
    State state = terms.get(term);
    if (state != null && !state.givenUp) {
      terms.remove(term);
    }
  }

  synchronized void close() {
    closed = true;
    terms.clear();
    slots.clear();
  }

  /** One timer per term at most: a check that finds the term renewed since sets the next one. */
  private void scheduleCheck(Term term, State state) {
    if (!state.checkPending && state.renewals == 0) {
      state.checkPending = true;
      after(Math.max(0, state.expiresAtNanos - clock.nanoTime()), term);
    }
  }

  private void check(Term term) {
    State state;
    synchronized (this) {
      state = terms.get(term);
      if (closed || state == null) {
        return;
      }
      state.checkPending = false;
      if (state.renewals > 0 || clock.nanoTime() - state.expiresAtNanos < 0) {
        scheduleCheck(term, state); // renewed since, or being renewed (renewalEnded checks again)
        return;
      }
      state.givenUp = true;
      state.checkPending = true; // until the give-back is answered
    }
    giveBack(term, state);
  }

  private void giveBack(Term term, State state) {
    ElectionNodes nodes = state.nodes;
    ZooKeeper zk;
    try {
      zk = client.getZookeeperClient().getZooKeeper();
    } catch (Exception e) {
      log.debug(
          "election '{}': no ZooKeeper connection to give back an unrenewed lease; trying again",
          nodes.election(),
          e);
      retry(term);
      return;
    }
    if (zk.getSessionId() != state.sessionId) {
      // The client has left the lease's session: its node ends when the servers expire that
      // session, as the servers judge it.
      forget(term);
      return;
    }
    zk.delete(
        state.rawPath,
        term.version(),
        (rc, path, ctx) -> {
          Code code = Code.get(rc);
          if (code == Code.OK) {
            log.warn(
                "election '{}', candidate '{}': the lease went unrenewed for its TTL although its ZooKeeper session is alive"
                    + " (is the elector stuck?); gave it back so that another candidate can lead",
                nodes.election(),
                state.candidate);
            forget(term);
          } else if (code == Code.NONODE || code == Code.BADVERSION) {
            forget(term); // the election had moved on already
          } else {
            log.debug(
                "election '{}': giving back an unrenewed lease failed ({}); trying again",
                nodes.election(),
                code);
            retry(term);
          }
        },
        null);
  }

  private void retry(Term term) {
    after(retryAfter.toNanos(), term);
  }

  /**
   * Runs {@link #check} for {@code term} no sooner than {@code delayNanos} from now, at the end of
   * its slot: checks due in the same slot share one timer, so 10,000 terms cost a few timers a
   * second instead of thousands. A give-back up to a slot late only keeps a stuck holder's
   * successor waiting that much longer; it never cuts a promised lease short.
   */
  private synchronized void after(long delayNanos, Term term) {
    if (closed) {
      return;
    }
    long due = clock.nanoTime() + delayNanos;
    long slot = due - Math.floorMod(due, SLOT_NANOS) + SLOT_NANOS;
    List<Term> waiting = slots.get(slot);
    if (waiting == null) {
      waiting = new ArrayList<>();
      slots.put(slot, waiting);
      long delay = Math.max(0, slot - clock.nanoTime());
      CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS, ON_TIMER_THREAD)
          .execute(() -> checkSlot(slot));
    }
    waiting.add(term);
  }

  private void checkSlot(long slot) {
    List<Term> due;
    synchronized (this) {
      due = slots.remove(slot);
    }
    if (due != null) {
      for (Term term : due) {
        check(term);
      }
    }
  }

  private synchronized void forget(Term term) {
    terms.remove(term);
  }
}
