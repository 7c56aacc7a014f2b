package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The paths on which a term's work could still run while another candidate leads, or could never be
 * stopped: each test here failed on the engine before it became a state machine.
 */
class ElectorSafetyTest {

  static final Duration LEASE = Duration.ofSeconds(15);
  static final Duration DEADLINE = Duration.ofSeconds(10);
  static final Duration RETRY = Duration.ofSeconds(2);
  static final Duration MAX_RETRY = Duration.ofMillis(2400);

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final MemoryLeaseStore shared = new MemoryLeaseStore(clock, java.time.Clock.systemUTC());
  final ScriptedStore storeA = new ScriptedStore(shared);
  final ScriptedStore storeB = new ScriptedStore(shared);
  final RecordingListener a = new RecordingListener();
  final RecordingListener b = new RecordingListener();
  final QuiescentPool pool = new QuiescentPool();
  final List<Elector> electors = new ArrayList<>();
  final List<CountDownLatch> gates = new ArrayList<>();

  @AfterEach
  void tearDown() {
    pool.refusing = false;
    gates.forEach(CountDownLatch::countDown);
    Optional.ofNullable(storeA.renewGate).ifPresent(CountDownLatch::countDown);
    electors.forEach(Elector::close);
    pool.close();
  }

  ElectorBuilder builder(
      LeaseStore store,
      String candidate,
      RecordingListener listener,
      java.util.concurrent.Executor executor) {
    return Elector.builder(store)
        .election("billing")
        .candidate(candidate)
        .leaseDuration(LEASE)
        .renewDeadline(DEADLINE)
        .retryPeriod(RETRY)
        .clock(clock)
        .scheduler(scheduler)
        .executor(executor)
        .ownPool(executor)
        .listener(listener);
  }

  Elector track(Elector e) {
    electors.add(e);
    return e;
  }

  CountDownLatch gate() {
    CountDownLatch g = new CountDownLatch(1);
    gates.add(g);
    return g;
  }

  static void awaitLatch(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Candidate "a" on storeA, whose work stops only when {@code stopWork} opens; started and
   * leading.
   */
  Elector slowToStop(CountDownLatch stopWork) {
    Elector ea =
        track(
            builder(storeA, "a", a, pool)
                .whileLeader(
                    term ->
                        () -> {
                          storeA.record("work stopping " + term.token());
                          awaitLatch(stopWork);
                          storeA.record("work stopped " + term.token());
                        })
                .build());
    ea.start();
    await().until(ea::isLeader);
    return ea;
  }

  // ------------------------------------------------------------ 1. late renewals

  @Test
  @DisplayName(
      "a renewal answered after its term ended gives the lease back only once the term's work has stopped")
  void lateRenewalReleasesAfterTheWorkStopped() {
    CountDownLatch stopWork = gate();
    Elector ea = slowToStop(stopWork);
    storeA.renewGate = new CountDownLatch(1);

    scheduler.advance(RETRY);
    await().until(() -> storeA.renewals.get() == 1);
    scheduler.advance(DEADLINE.minus(RETRY)); // the deadline passes while the renewal hangs
    await().until(() -> storeA.calls().contains("work stopping 1"));

    storeA.renewGate.countDown(); // the renewal now succeeds, late
    await()
        .until(
            () ->
                storeA.renewalsAnswered.get() == 1
                    && pool.active() == 1); // only the stopping work is left

    assertThat(storeA.calls())
        .as("released while the work was still stopping")
        .doesNotContain("release a 1");
    assertThat(shared.read("billing"))
        .hasValueSatisfying(r -> assertThat(r.holder()).isEqualTo("a"));

    stopWork.countDown();
    await().until(() -> storeA.calls().contains("release a 1"));
    List<String> calls = storeA.calls();
    assertThat(calls.indexOf("work stopped 1")).isLessThan(calls.indexOf("release a 1"));
  }

  @Test
  @DisplayName(
      "a batched renewal answered after its term ended gives the lease back only once the term's work has stopped")
  void lateBatchedRenewalReleasesAfterTheWorkStopped() {
    RenewalBatchingTest.BatchingStore store = new RenewalBatchingTest.BatchingStore(shared);
    CountDownLatch stopWork = gate();
    List<String> work = new CopyOnWriteArrayList<>();
    Elector leader =
        track(
            builder(store, "a", a, pool)
                .whileLeader(
                    term ->
                        () -> {
                          work.add("stopping");
                          awaitLatch(stopWork);
                          work.add("stopped");
                        })
                .build());
    leader.start();
    await().until(leader::isLeader);
    store.hang = new CountDownLatch(1);
    gates.add(store.hang);

    scheduler.advance(RETRY);
    await().until(() -> store.hanging.get() == 1);
    scheduler.advance(DEADLINE); // the deadline passes while the batch hangs
    await().until(() -> work.contains("stopping"));

    store.hang.countDown(); // the batch now renews the lease, late
    await().until(() -> store.batchSizes.size() == 1 && pool.active() == 1);

    assertThat(shared.read("billing"))
        .as("the lease while the work is still stopping")
        .hasValueSatisfying(r -> assertThat(r.holder()).isEqualTo("a"));

    stopWork.countDown();
    await().until(() -> shared.read("billing").isEmpty());
    assertThat(work).containsExactly("stopping", "stopped");
  }

  @Test
  @DisplayName(
      "a grant answered after close() is given back only once the previous term's work has stopped")
  void grantAnsweredAfterCloseReleasesAfterTheWorkStopped() {
    CountDownLatch stopWork = gate();
    Elector ea = slowToStop(stopWork);
    Elector eb = track(builder(storeB, "b", b, pool).build());
    eb.start();
    await().until(() -> eb.currentLeader().equals(Optional.of("a")));

    ea.stepDown(); // its work takes its time to stop, and the release waits behind it
    await().until(() -> storeA.calls().contains("work stopping 1"));
    storeA.acquireGate = new CountDownLatch(1);
    gates.add(storeA.acquireGate);
    scheduler.advance(
        RETRY.multipliedBy(2)); // the back-off ends: a campaigns again, still holding the lease
    await().until(() -> storeA.acquires.get() == 2);
    CompletableFuture<Void> closed = CompletableFuture.runAsync(ea::close);
    await().until(() -> ea.toString().contains("state=STOPPING"));

    storeA.acquireGate.countDown(); // granted anew to a, which is stopping
    await()
        .until(
            () ->
                storeA.calls().contains("acquire a")
                    && pool.active() == 1); // only the stopping work is left

    assertThat(storeA.calls())
        .as("released while the work was still stopping")
        .noneMatch(c -> c.startsWith("release"));
    assertThat(eb.isLeader()).isFalse();

    stopWork.countDown();
    await().until(closed::isDone);
    await().until(eb::isLeader);
  }

  // ------------------------------------------------------------ 2. errors from user code

  @Test
  @DisplayName(
      "an Error from the work's start gives the term up as an exception does, and close() returns at once")
  void errorFromWorkStartGivesTheTermUp() {
    Elector ea =
        track(
            builder(storeA, "a", a, pool)
                .whileLeader(
                    term -> {
                      throw new AssertionError("work cannot start");
                    })
                .build());
    ea.start();
    await().until(() -> a.terms().contains("elected 1"));
    Elector eb = track(builder(storeB, "b", b, pool).build());
    eb.start();

    await().until(eb::isLeader);
    assertThat(a.terms()).startsWith("elected 1", "revoked 1");

    CompletableFuture<Void> closed = CompletableFuture.runAsync(ea::close);
    await().atMost(Duration.ofSeconds(10)).until(closed::isDone);
    assertThat(ea.isRunning()).isFalse();
  }

  @Test
  @DisplayName(
      "an Error from a listener is contained: the other listeners and later callbacks still run")
  void errorFromAListenerIsContained() {
    Elector ea =
        track(
            builder(storeA, "a", new RecordingListener(), pool)
                .listener(
                    new ElectionListener() {
                      @Override
                      public void onElected(Term term) {
                        throw new AssertionError("listener bug");
                      }
                    })
                .listener(a)
                .build());
    ea.start();
    await().until(() -> a.terms().contains("elected 1"));

    ea.stepDown();

    await().until(() -> a.terms().contains("revoked 1"));
  }

  @Test
  @DisplayName(
      "an Error from stopping the work still ends the term, releases the lease, and lets the elector lead again")
  void errorFromStoppingTheWorkStillReleases() {
    Elector ea =
        track(
            builder(storeA, "a", a, pool)
                .whileLeader(
                    term ->
                        () -> {
                          throw new StackOverflowError("stop failed");
                        })
                .build());
    ea.start();
    await().until(ea::isLeader);
    Elector eb = track(builder(storeB, "b", b, pool).build());
    eb.start();
    await().until(() -> eb.currentLeader().equals(Optional.of("a")));

    ea.stepDown();

    await().until(eb::isLeader);
    eb.close();
    scheduler.advance(MAX_RETRY.multipliedBy(2));
    await().until(() -> a.terms().contains("elected 3"));
  }

  // ------------------------------------------------------------ 3. refused tasks

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"rejected", "no thread"})
  @DisplayName(
      "a batched leader whose executor refuses work still steps down by its deadline, and leads again once it accepts")
  void refusedWorkStillStepsDownByTheDeadline(String how) {
    RenewalBatchingTest.BatchingStore store = new RenewalBatchingTest.BatchingStore(shared);
    Supplier<Throwable> refusal =
        how.equals("rejected")
            ? () -> new RejectedExecutionException("bounded queue full (scripted)")
            : () -> new OutOfMemoryError("unable to create native thread (scripted)");
    java.util.concurrent.Executor executor =
        task -> {
          if (pool.refusing) {
            Throwable t = refusal.get();
            if (t instanceof Error) {
              throw (Error) t;
            }
            throw (RuntimeException) t;
          }
          pool.execute(task);
        };
    Elector leader = track(builder(store, "a", a, executor).build());
    leader.start();
    await().until(leader::isLeader);

    pool.refusing = true;
    scheduler.advance(DEADLINE.plus(RETRY));

    await().until(() -> a.terms().contains("revoked 1"));
    assertThat(leader.isLeader()).isFalse();

    pool.refusing = false;
    // Time moves in small steps: the store calls run on the pool again, and a grant whose answer
    // came after the clock had moved past its renew deadline would be given back.
    await()
        .until(
            () -> {
              scheduler.advance(Duration.ofMillis(200));
              return a.terms().contains("elected 2");
            });
  }

  // ------------------------------------------------------------ 4. lost wake-ups

  @Test
  @DisplayName(
      "a release seen right after close() and start() is acted on, even inside the back-off of the stopped run")
  void releaseAfterRestartInsideTheOldBackOffIsSeen() {
    storeA.watchReportsExpiry = true;
    storeB.watchReportsExpiry = true;
    Elector ea = track(builder(storeA, "a", a, Runnable::run).build());
    Elector eb = track(builder(storeB, "b", b, Runnable::run).build());
    ea.start();
    eb.start();
    ea.stepDown(); // a backs off for 2 × retryPeriod; b takes over on the release
    assertThat(eb.isLeader()).isTrue();

    ea.close();
    ea.start(); // follows b, watching
    assertThat(ea.currentLeader()).contains("b");
    eb.close(); // released inside a's old back-off window

    assertThat(ea.isLeader()).isTrue();
  }

  @Test
  @DisplayName("watch events count when the monotonic clock reads negative")
  void negativeMonotonicTime() {
    clock.set(-5_000_000_000L);
    storeA.watchReportsExpiry = true;
    storeB.watchReportsExpiry = true;
    Elector ea = track(builder(storeA, "a", a, Runnable::run).build());
    Elector eb = track(builder(storeB, "b", b, Runnable::run).build());
    ea.start();
    eb.start();

    ea.close();

    assertThat(eb.isLeader()).isTrue();
  }

  // ------------------------------------------------------------ 5. the end of a term

  @Test
  @DisplayName(
      "onEnd and ended() dependents run with the callbacks, after onElected returned and before onRevoked")
  void endSignalsRunWithTheCallbacks() {
    CountDownLatch finishElected = gate();
    List<String> seen = new CopyOnWriteArrayList<>();
    Elector ea =
        track(
            builder(storeA, "a", a, pool)
                .listener(
                    new ElectionListener() {
                      @Override
                      public void onElected(Term term) {
                        term.onEnd(() -> seen.add("onEnd"));
                        term.ended().thenRun(() -> seen.add("ended"));
                        seen.add("elected");
                        awaitLatch(finishElected);
                        seen.add("elected returned");
                      }

                      @Override
                      public void onRevoked(Term term) {
                        seen.add("revoked");
                      }
                    })
                .build());
    ea.start();
    await().until(() -> seen.contains("elected"));

    ea.stepDown();
    await().until(() -> ea.toString().contains("state=FOLLOWING"));
    finishElected.countDown();

    await().until(() -> seen.contains("revoked"));
    assertThat(seen).containsExactly("elected", "elected returned", "onEnd", "ended", "revoked");
  }

  // ------------------------------------------------------------ 6. default candidate ids

  @Test
  @DisplayName(
      "two electors in one process without a chosen id get different ids, and only one leads")
  void defaultCandidateIdsAreUniquePerElector() {
    Elector one =
        track(
            Elector.builder(shared)
                .election("billing")
                .clock(clock)
                .scheduler(scheduler)
                .executor(Runnable::run)
                .ownPool(Runnable::run)
                .build());
    Elector two =
        track(
            Elector.builder(shared)
                .election("billing")
                .clock(clock)
                .scheduler(scheduler)
                .executor(Runnable::run)
                .ownPool(Runnable::run)
                .build());

    one.start();
    two.start();

    assertThat(one.candidate()).isNotEqualTo(two.candidate());
    assertThat(one.isLeader()).isTrue();
    assertThat(two.isLeader()).isFalse();
  }

  // ------------------------------------------------------------ 7. what the elector tells and
  // checks

  @Test
  @DisplayName("a failure of a new kind in the middle of a streak is logged at WARN")
  void newKindOfFailureIsLoggedAtWarn() {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      storeA.failAll = true;
      Elector ea = track(builder(storeA, "a", a, Runnable::run).build());
      ea.start();
      scheduler.advance(MAX_RETRY.multipliedBy(3));
      storeA.failAll = false;
      storeA.failNext =
          () ->
              new LeaseStoreException(
                  "billing", "permission denied for table baton_lease (scripted)");
      scheduler.advance(MAX_RETRY);
    } finally {
      System.setErr(original);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    assertThat(log.lines().filter(l -> l.contains("WARN") && l.contains("permission denied")))
        .as(log)
        .isNotEmpty();
  }

  @Test
  @DisplayName("a grant whose TTL is not longer than the renew deadline is given back, not led on")
  void grantShorterThanTheRenewDeadlineIsRefused() {
    storeA.grantedTtl = DEADLINE.minusSeconds(1);
    Elector ea = track(builder(storeA, "a", a, Runnable::run).build());

    ea.start();

    assertThat(ea.isLeader()).isFalse();
    assertThat(a.terms()).isEmpty();
    assertThat(storeA.calls()).contains("release a 1");
  }

  // ------------------------------------------------------------ 5. deadline timers

  @Test
  @DisplayName(
      "a batched leader steps down at its own deadline while its call hangs, after an earlier deadline in the same call woke it")
  void hangingBatchEndsEachTermAtItsOwnDeadline() {
    RenewalBatchingTest.BatchingStore store = new RenewalBatchingTest.BatchingStore(shared);
    Elector early =
        track(
            builder(store, "a", a, pool)
                .election("reports")
                .renewDeadline(Duration.ofSeconds(5))
                .build());
    early.start();
    await().until(early::isLeader);
    // Off the timers' grid, so that a timer set for the later deadline wakes a little before it.
    clock.advance(Duration.ofMillis(50));
    Elector late = track(builder(store, "b", b, pool).build());
    late.start();
    await().until(late::isLeader);
    Term lateTerm = late.currentTerm().orElseThrow();
    store.hang = gate();

    scheduler.advance(RETRY); // both renewals go out in one call, which hangs
    await().until(() -> store.hanging.get() == 1 && pool.active() == 1);
    scheduler.advance(Duration.ofSeconds(3)); // past the earlier deadline: the call is overdue
    await().until(() -> a.terms().contains("revoked 1") && pool.active() == store.hanging.get());
    assertThat(lateTerm.isEnded()).as("the later term, before its deadline").isFalse();

    scheduler.advance(Duration.ofSeconds(5)); // past the later deadline, the call still hanging
    await().until(() -> pool.active() == store.hanging.get());

    assertThat(lateTerm.isEnded())
        .as("the later term, its deadline passed while its renewal hangs")
        .isTrue();
  }

  @Test
  @DisplayName(
      "a deadline timer that fires while a renewal moves the deadline still guards the moved one")
  void deadlineMovedAsTheTimerFiredIsStillGuarded() {
    HookedClock hooked = new HookedClock(clock);
    Elector ea = track(builder(storeA, "a", a, pool).clock(hooked).build());
    ea.start();
    await().until(ea::isLeader);
    Term term = ea.currentTerm().orElseThrow();
    CountDownLatch firstRenewal = gate();
    storeA.renewGate = firstRenewal;

    scheduler.advance(RETRY);
    await().until(() -> storeA.renewals.get() == 1);
    scheduler.advance(DEADLINE.minus(RETRY).minusMillis(1)); // a millisecond before the deadline
    // The renewal is answered now; the deadline timer fires just after the engine has read the
    // clock to check the old deadline, and before it has moved the deadline on.
    hooked.afterNextRead = () -> scheduler.advance(Duration.ofMillis(1));
    firstRenewal.countDown();
    await().until(() -> storeA.renewalsAnswered.get() == 1 && pool.active() == 0);
    assertThat(term.isEnded()).as("the term, renewed in time").isFalse();

    storeA.renewGate = gate(); // the next renewal hangs
    scheduler.runDue();
    await().until(() -> storeA.renewals.get() == 2 && pool.active() == 1);
    scheduler.advance(DEADLINE); // past the moved deadline
    await().until(() -> pool.active() == 1);

    assertThat(term.isEnded())
        .as("the term, its moved deadline passed while its renewal hangs")
        .isTrue();
  }

  @ParameterizedTest(name = "{0} renewals")
  @ValueSource(strings = {"direct", "batched"})
  @DisplayName(
      "a leader whose scheduler refuses its timers (shut down under it) ends its term rather than lead on with no deadline")
  void refusedTimersEndTheTerm(String renewals) {
    LeaseStore store =
        renewals.equals("batched") ? new RenewalBatchingTest.BatchingStore(shared) : storeA;
    Elector leader = track(builder(store, "a", a, pool).build());
    leader.start();
    await().until(leader::isLeader);

    scheduler.refusing = true;
    scheduler.advance(RETRY); // the renewal set before goes out; nothing after it can be timed
    await().until(() -> pool.active() == 0);

    assertThat(a.terms())
        .as("callbacks, the lease's last renewal having been the last thing timed")
        .contains("revoked 1");
    scheduler.refusing = false;
  }

  /** The test's clock, which runs an action once, right after a read, on the reading thread. */
  static final class HookedClock implements MonotonicClock {
    private final FakeClock clock;
    volatile Runnable afterNextRead;

    HookedClock(FakeClock clock) {
      this.clock = clock;
    }

    @Override
    public long nanoTime() {
      long now = clock.nanoTime();
      Runnable action = afterNextRead;
      if (action != null) {
        afterNextRead = null;
        action.run();
      }
      return now;
    }
  }
}
