package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The engine on a fake clock and a manual scheduler: advance time, assert the transition. Store
 * calls and callbacks run inline unless a test needs a call to hang, when they run on a real pool
 * while time still moves only by hand.
 */
class ElectorTest {

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
  final List<Elector> electors = new ArrayList<>();
  ExecutorService pool;

  @BeforeEach
  void quietExpiry() {
    storeA.canWatch = true;
    storeB.canWatch = true;
  }

  @AfterEach
  void tearDown() {
    storeA.failAll = false;
    storeB.failAll = false;
    electors.forEach(Elector::close);
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  ElectorBuilder builder(
      LeaseStore store, String candidate, ElectionListener listener, Executor executor) {
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

  Elector elector(ScriptedStore store, String candidate, RecordingListener listener) {
    return track(builder(store, candidate, listener, Runnable::run).build());
  }

  Elector threaded(ScriptedStore store, String candidate, RecordingListener listener) {
    if (pool == null) {
      pool = Executors.newCachedThreadPool();
    }
    return track(builder(store, candidate, listener, pool).build());
  }

  Elector track(Elector e) {
    electors.add(e);
    return e;
  }

  @Test
  @DisplayName("campaigns at once on start, without waiting a tick")
  void campaignsAtOnceOnStart() {
    Elector e = elector(storeA, "a", a);
    e.start();

    assertThat(e.isLeader()).isTrue();
    assertThat(storeA.acquires).hasValue(1);
    assertThat(a.events()).containsExactly("elected 1", "leader a");
    assertThat(e.currentTerm())
        .hasValueSatisfying(t -> assertThat(t.token()).isEqualTo(FencingToken.of(1)));
  }

  @Test
  @DisplayName("start returns before the store has answered")
  void startReturnsBeforeTheStoreAnswers() {
    storeA.acquireGate = new CountDownLatch(1);
    Elector e = threaded(storeA, "a", a);

    e.start();
    await().until(() -> storeA.acquires.get() == 1);
    assertThat(e.isLeader()).isFalse();

    storeA.acquireGate.countDown();
    await().until(e::isLeader);
  }

  @Test
  @DisplayName(
      "onElected runs on the thread whose store call granted the lease, without waking another, and a slow one holds up no renewal")
  void onElectedRunsOnTheGrantingThread() throws Exception {
    AtomicReference<Thread> granting = new AtomicReference<>();
    AtomicReference<Thread> electedOn = new AtomicReference<>();
    CountDownLatch slow = new CountDownLatch(1);
    LeaseStore recording =
        new ForwardingLeaseStore(storeA) {
          @Override
          public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
            Acquisition granted = super.tryAcquire(election, candidate, ttl);
            if (granted.isGranted()) {
              granting.set(Thread.currentThread());
            }
            return granted;
          }
        };
    ElectionListener slowOnElected =
        new ElectionListener() {
          @Override
          public void onElected(Term term) {
            electedOn.set(Thread.currentThread());
            try {
              slow.await();
            } catch (InterruptedException interrupted) {
              Thread.currentThread().interrupt();
            }
          }
        };
    pool = Executors.newCachedThreadPool();
    Elector e = track(builder(recording, "a", slowOnElected, pool).build());
    try {
      e.start();
      await().until(() -> electedOn.get() != null);
      assertThat(electedOn.get()).isSameAs(granting.get());

      scheduler.advance(RETRY);
      await().until(() -> storeA.renewals.get() == 1);
      assertThat(e.isLeader()).isTrue();
    } finally {
      slow.countDown();
    }
  }

  @Test
  @DisplayName("a leader renews every retry period and keeps its token")
  void renewsEveryRetryPeriodKeepingTheToken() {
    Elector e = elector(storeA, "a", a);
    e.start();

    scheduler.advance(RETRY);
    assertThat(storeA.renewals).hasValue(1);
    scheduler.advance(RETRY.multipliedBy(10));
    assertThat(storeA.renewals).hasValue(11);
    assertThat(e.isLeader()).isTrue();
    assertThat(a.terms()).containsExactly("elected 1");
  }

  @Test
  @DisplayName(
      "a leader renews at the store's own period where it leaves two renewals per renew deadline, and retries every retry period")
  void renewsAtTheStoresPeriodAndRetriesEveryRetryPeriod() {
    storeA.renewalPeriod = Duration.ofSeconds(4);
    Elector e = elector(storeA, "a", a);
    e.start();

    scheduler.advance(RETRY);
    assertThat(storeA.renewals).as("after one retry period").hasValue(0);
    scheduler.advance(Duration.ofSeconds(2));
    assertThat(storeA.renewals).as("after the store's period").hasValue(1);
    scheduler.advance(Duration.ofSeconds(40));
    assertThat(storeA.renewals).hasValue(11);

    storeA.failNext = () -> new LeaseStoreException("billing", "scripted");
    scheduler.advance(Duration.ofSeconds(4));
    assertThat(storeA.renewals).hasValue(12);
    scheduler.advance(RETRY);
    assertThat(storeA.renewals)
        .as("a failed renewal is tried again a retry period later")
        .hasValue(13);
    assertThat(e.isLeader()).isTrue();
    assertThat(a.terms()).containsExactly("elected 1");
  }

  @Test
  @DisplayName(
      "a store's renewal period that leaves fewer than two renewals per renew deadline is not taken")
  void aStorePeriodTooLongForTheRenewDeadlineIsNotTaken() {
    storeA.renewalPeriod = DEADLINE.dividedBy(2).plusMillis(1);
    Elector e = elector(storeA, "a", a);
    e.start();

    scheduler.advance(RETRY.multipliedBy(5));
    assertThat(storeA.renewals).hasValue(5);
    assertThat(e.isLeader()).isTrue();
  }

  @Test
  @DisplayName("a single failed renewal does not cost leadership")
  void singleFailedRenewalIsTolerated() {
    Elector e = elector(storeA, "a", a);
    e.start();
    storeA.failNext = () -> new LeaseStoreException("billing", "timeout (scripted)");

    scheduler.advance(RETRY);
    assertThat(e.isLeader()).isTrue();
    scheduler.advance(RETRY);
    assertThat(storeA.renewals).hasValue(2);
    assertThat(e.isLeader()).isTrue();
    assertThat(a.terms()).containsExactly("elected 1");
  }

  @Test
  @DisplayName("steps down when renewals fail past the renew deadline, before the lease expires")
  void stepsDownAtTheRenewDeadline() {
    Elector e = elector(storeA, "a", a);
    e.start();
    long electedAt = clock.nanoTime();
    storeA.failAll = true;

    scheduler.advance(DEADLINE.minusMillis(1));
    assertThat(e.isLeader()).isTrue();
    scheduler.advance(Duration.ofMillis(1));

    assertThat(e.isLeader()).isFalse();
    assertThat(a.terms()).containsExactly("elected 1", "revoked 1");
    assertThat(Duration.ofNanos(clock.nanoTime() - electedAt)).isLessThan(LEASE);
  }

  @Test
  @DisplayName(
      "steps down at the deadline even while a renew call hangs, and gives back a late renewal")
  void stepsDownWhileARenewCallHangs() {
    Elector e = threaded(storeA, "a", a);
    e.start();
    await().until(() -> e.isLeader() && scheduler.pending() == 2); // the renewal and the deadline
    storeA.renewGate = new CountDownLatch(1);

    scheduler.advance(RETRY);
    await().until(() -> storeA.renewals.get() == 1);
    scheduler.advance(DEADLINE.minus(RETRY));

    await().until(() -> a.terms().contains("revoked 1"));
    assertThat(e.isLeader()).isFalse();

    storeA.renewGate.countDown();
    await().until(() -> storeA.calls().contains("release a 1"));
    assertThat(shared.read("billing")).as("calls %s", storeA.calls()).isEmpty();
  }

  @Test
  @DisplayName(
      "after a stall the term is invalid at once and the leader steps down before calling the store")
  void stalledLeaderStepsDownFirst() {
    Elector e = elector(storeA, "a", a);
    e.start();
    Term term = a.lastTerm();

    clock.advance(LEASE.plusSeconds(5)); // a pause: time passes, nothing of ours runs
    assertThat(term.isValid()).isFalse();
    assertThat(e.isLeader()).isFalse();

    scheduler.runDue();
    assertThat(storeA.renewals).hasValue(0);
    assertThat(a.terms()).containsExactly("elected 1", "revoked 1");
    assertThat(term.isEnded()).isTrue();
  }

  @Test
  @DisplayName("a lost lease ends the term, and the elector follows the new holder")
  void lostLeaseEndsTheTerm() {
    // The renewal must find it: a pushed loss (LeaseLossPushTest) would end the term at once.
    storeA.canWatchLease = false;
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Term term = a.lastTerm();
    // Someone else's release-and-takeover, as a store could report it.
    shared.release(new Lease("billing", "a", term.token(), LEASE, ""));
    Elector eb = elector(storeB, "b", b);
    eb.start();
    assertThat(eb.isLeader()).isTrue();

    scheduler.advance(RETRY);

    assertThat(ea.isLeader()).isFalse();
    assertThat(a.terms()).containsExactly("elected 1", "revoked 1");
    assertThat(ea.currentLeader()).contains("b");
    assertThat(term.isEnded()).isTrue();
  }

  @Test
  @DisplayName("followers learn who leads")
  void followersLearnWhoLeads() {
    elector(storeA, "a", a).start();
    Elector eb = elector(storeB, "b", b);
    eb.start();

    assertThat(eb.isLeader()).isFalse();
    assertThat(eb.currentLeader()).contains("a");
    assertThat(b.events()).containsExactly("leader a");
  }

  @Test
  @DisplayName("a second elector with the same candidate id follows until the first closes")
  void aSecondElectorWithTheSameIdFollowsUntilTheFirstCloses() {
    Elector first = elector(storeA, "a", a);
    first.start();
    Elector twin = elector(storeB, "a", b);
    twin.start();

    scheduler.advance(LEASE.multipliedBy(3));

    assertThat(first.isLeader()).as("the first").isTrue();
    assertThat(twin.isLeader()).as("the twin").isFalse();
    assertThat(a.events()).containsExactly("elected 1", "leader a");
    assertThat(b.events()).containsExactly("leader a");

    first.close();
    scheduler.runDue();

    assertThat(twin.isLeader()).as("the twin after the first closed").isTrue();
    assertThat(twin.currentTerm())
        .hasValueSatisfying(t -> assertThat(t.token()).isEqualTo(FencingToken.of(2)));
  }

  @Test
  @DisplayName("a follower never gets onRevoked without onElected")
  void noRevokedWithoutElected() {
    elector(storeA, "a", a).start();
    Elector eb = elector(storeB, "b", b);
    eb.start();
    eb.close();
    storeA.failAll = true;
    scheduler.advance(LEASE);

    assertThat(b.terms()).isEmpty();
  }

  @Test
  @DisplayName(
      "close stops the leader's work before releasing, and another candidate takes over at once")
  void closeStopsWorkThenReleases() {
    List<String> order = new ArrayList<>();
    Elector ea =
        track(
            builder(storeA, "a", a, Runnable::run)
                .whileLeader(term -> () -> storeA.record("work stopped " + term.token()))
                .build());
    ea.start();
    Elector eb = elector(storeB, "b", b);
    eb.start();

    ea.close();

    List<String> calls = storeA.calls();
    assertThat(calls.indexOf("work stopped 1"))
        .isLessThan(calls.indexOf("release a 1"))
        .isNotNegative();
    assertThat(eb.isLeader()).isTrue();
    assertThat(ea.isRunning()).isFalse();
    assertThat(order).isEmpty();
  }

  @Test
  @DisplayName("an elector can be started again after close, with a new term")
  void restartAfterClose() {
    Elector e = elector(storeA, "a", a);
    e.start();
    e.close();
    assertThat(e.isLeader()).isFalse();

    e.start();

    assertThat(e.isLeader()).isTrue();
    assertThat(a.terms()).containsExactly("elected 1", "revoked 1", "elected 2");
  }

  @Test
  @DisplayName("stepDown releases so another candidate leads at once, and campaigns again later")
  void stepDownLetsAnotherIn() {
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Elector eb = elector(storeB, "b", b);
    eb.start();

    ea.stepDown();

    assertThat(ea.isLeader()).isFalse();
    assertThat(eb.isLeader()).isTrue();
    int before = storeA.acquires.get();
    scheduler.advance(RETRY.multipliedBy(2));
    assertThat(storeA.acquires.get()).isGreaterThan(before);
    assertThat(ea.currentLeader()).contains("b");
  }

  @Test
  @DisplayName("callbacks come in pairs and in order across losing and regaining")
  void callbacksInPairs() {
    Elector e = elector(storeA, "a", a);
    e.start();
    for (int i = 0; i < 3; i++) {
      e.stepDown();
      scheduler.advance(RETRY.multipliedBy(2));
    }

    assertThat(a.terms())
        .containsExactly(
            "elected 1",
            "revoked 1",
            "elected 2",
            "revoked 2",
            "elected 3",
            "revoked 3",
            "elected 4");
  }

  @Test
  @DisplayName("term-scoped work is stopped on loss and started afresh with each new term")
  void termWorkRestartsWithEachTerm() {
    List<String> work = new ArrayList<>();
    Elector e =
        track(
            builder(storeA, "a", a, Runnable::run)
                .whileLeader(
                    term -> {
                      work.add("start " + term.token());
                      return () -> work.add("stop " + term.token());
                    })
                .build());
    e.start();
    e.stepDown();
    scheduler.advance(RETRY.multipliedBy(2));
    storeA.failAll = true;
    scheduler.advance(DEADLINE);
    storeA.failAll = false;
    // Its release failed: the lease stays live, and is never granted again, not even to it.
    scheduler.advance(LEASE);

    assertThat(work).containsExactly("start 1", "stop 1", "start 2", "stop 2", "start 3");
  }

  @Test
  @DisplayName("work that fails to start gives the term up so another candidate can lead")
  void failingWorkGivesTheTermUp() {
    Elector ea =
        track(
            builder(storeA, "a", a, Runnable::run)
                .whileLeader(
                    term -> {
                      throw new IllegalStateException("cannot connect to the queue");
                    })
                .build());
    ea.start();
    Elector eb = elector(storeB, "b", b);
    eb.start();

    assertThat(a.terms()).containsExactly("elected 1", "revoked 1");
    assertThat(ea.isLeader()).isFalse();
    assertThat(eb.isLeader()).isTrue();
  }

  @Test
  @DisplayName("a listener that throws is logged and contained; the others still run")
  void throwingListenerIsContained() {
    Elector e =
        track(
            builder(storeA, "a", a, Runnable::run)
                .listener(
                    new ElectionListener() {
                      @Override
                      public void onElected(Term term) {
                        throw new IllegalStateException("listener bug");
                      }
                    })
                .listener(b)
                .build());
    e.start();
    scheduler.advance(RETRY.multipliedBy(3));

    assertThat(e.isLeader()).isTrue();
    assertThat(a.terms()).containsExactly("elected 1");
    assertThat(b.terms()).containsExactly("elected 1");
  }

  @Test
  @DisplayName("a slow callback does not delay renewals")
  void slowCallbackDoesNotDelayRenewals() {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch inCallback = new CountDownLatch(1);
    pool = Executors.newCachedThreadPool();
    Elector e =
        track(
            builder(storeA, "a", a, pool)
                .listener(
                    new ElectionListener() {
                      @Override
                      public void onElected(Term term) {
                        inCallback.countDown();
                        try {
                          release.await();
                        } catch (InterruptedException ex) {
                          Thread.currentThread().interrupt();
                        }
                      }
                    })
                .build());
    e.start();
    await().until(() -> inCallback.getCount() == 0);

    for (int i = 1; i <= 3; i++) {
      int expected = i;
      scheduler.advance(RETRY);
      await().until(() -> storeA.renewals.get() == expected);
    }
    assertThat(e.isLeader()).isTrue();
    release.countDown();
  }

  @Test
  @DisplayName("a grant confirmed after the renew deadline is given back, not led on")
  void lateGrantIsReleased() {
    storeA.acquireGate = new CountDownLatch(1);
    Elector e = threaded(storeA, "a", a);
    e.start();
    await().until(() -> storeA.acquires.get() == 1);

    clock.advance(DEADLINE.plusSeconds(1));
    storeA.acquireGate.countDown();

    await().until(() -> storeA.calls().contains("release a 1"));
    assertThat(e.isLeader()).isFalse();
    assertThat(a.terms()).isEmpty();
  }

  @Test
  @DisplayName(
      "a watch that goes live while a follower backs off after a late grant does not cut the back-off short")
  void watchGoingLiveDuringBackOffWaits() {
    // Tasks wait until the test runs them, so that the acquire's answer can come late.
    java.util.ArrayDeque<Runnable> tasks = new java.util.ArrayDeque<>();
    java.util.concurrent.atomic.AtomicBoolean holding =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    Elector e =
        track(
            builder(
                    storeA,
                    "a",
                    a,
                    r -> {
                      if (holding.get()) {
                        tasks.add(r);
                      } else {
                        r.run();
                      }
                    })
                .build());
    e.start();
    tasks.poll().run(); // start() itself, which queues the first acquire
    clock.advance(DEADLINE.plusSeconds(1)); // the acquire's answer comes after the renew deadline
    runAll(tasks); // the late grant is released, and the follower's watch is set up and goes live
    assertThat(storeA.calls()).contains("release a 1");
    assertThat(storeA.openWatches).as("watches of the follower backing off").hasValue(1);
    assertThat(storeA.acquires).as("acquires while backing off").hasValue(1);

    scheduler.advance(MAX_RETRY);
    runAll(tasks);
    assertThat(storeA.acquires).as("acquires once the back-off is over").hasValue(2);
    holding.set(false); // close() in tearDown runs its tasks at once
  }

  private static void runAll(java.util.ArrayDeque<Runnable> tasks) {
    while (!tasks.isEmpty()) {
      tasks.poll().run();
    }
  }

  @Test
  @DisplayName(
      "a candidate elected at once never watches, a leader drops its watch, and watches again once it follows")
  void leaderDropsItsWatchAndWatchesAgainAsFollower() {
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Elector eb = elector(storeB, "b", b);
    eb.start();
    assertThat(ea.isLeader()).isTrue();
    assertThat(storeA.watchesOpened)
        .as("watches the leader elected at its first attempt ever opened")
        .hasValue(0);
    assertThat(storeB.openWatches).as("watches of the follower").hasValue(1);

    ea.close();
    assertThat(eb.isLeader()).isTrue();
    assertThat(storeB.openWatches).as("watches of the new leader").hasValue(0);

    storeB.failAll = true;
    scheduler.advance(DEADLINE);
    assertThat(eb.isLeader()).isFalse();
    assertThat(storeB.openWatches).as("watches of the leader that stepped down").hasValue(1);
    eb.close();
    assertThat(storeB.openWatches).as("watches after close").hasValue(0);
  }

  @Test
  @DisplayName("on pool threads too, a new leader closes the watch it followed with")
  void newLeaderOnPoolThreadsClosesItsWatch() {
    Elector ea = threaded(storeA, "a", a);
    ea.start();
    await().until(ea::isLeader);
    Elector eb = threaded(storeB, "b", b);
    eb.start();
    await().until(() -> storeB.openWatches.get() == 1);

    ea.close();
    await().until(eb::isLeader);
    await()
        .untilAsserted(
            () -> assertThat(storeB.openWatches).as("watches of the new leader").hasValue(0));
    assertThat(b.terms()).as("the new leader's terms").hasSize(1);
  }

  @Test
  @DisplayName("a follower tries at once when the watch reports a release")
  void followerTriesOnRelease() {
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Elector eb = elector(storeB, "b", b);
    eb.start();

    ea.close();

    assertThat(eb.isLeader()).isTrue();
    assertThat(b.terms()).containsExactly("elected 2");
  }

  @Test
  @DisplayName("a follower without a watch polls every retry period, with jitter")
  void followerWithoutWatchPolls() {
    storeB.canWatch = false;
    elector(storeA, "a", a).start();
    Elector eb = elector(storeB, "b", b);
    eb.start();
    assertThat(storeB.acquires).hasValue(1);

    scheduler.advance(RETRY.minusMillis(1));
    assertThat(storeB.acquires).hasValue(1);
    scheduler.advance(MAX_RETRY.minus(RETRY).plusMillis(1));
    assertThat(storeB.acquires).hasValue(2);
  }

  @Test
  @DisplayName(
      "a follower with a release-only watch visits when the holder's lease could expire, not every retry")
  void followerWithWatchVisitsAtExpiry() {
    elector(storeA, "a", a).start();
    Elector eb = elector(storeB, "b", b);
    eb.start();

    // The first attempt, then one when the watch goes live (a release in between would be unseen).
    assertThat(storeB.acquires).hasValue(2);
    scheduler.advance(LEASE.minusMillis(1));
    assertThat(storeB.acquires).hasValue(2);
    scheduler.advance(Duration.ofMillis(100));
    assertThat(storeB.acquires).hasValue(3);
    assertThat(eb.isLeader()).isFalse();
  }

  @Test
  @DisplayName(
      "a follower whose watch reports expiry does not poll; it looks once every two leases")
  void followerWithExpiryWatchDoesNotPoll() {
    storeB.watchReportsExpiry = true;
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Elector eb = elector(storeB, "b", b);
    eb.start();

    // The first attempt, then one when the watch goes live; none after that for two leases.
    scheduler.advance(LEASE.multipliedBy(2).minusMillis(1));
    assertThat(storeB.acquires).hasValue(2);
    // Then one look of its own, in case the watch died without a word (at most 20% later).
    scheduler.advance(LEASE.multipliedBy(2).dividedBy(5).plusMillis(1));
    assertThat(storeB.acquires).hasValue(3);

    ea.close();
    assertThat(eb.isLeader()).isTrue();
  }

  @Test
  @DisplayName("after a crash a follower takes over when the lease expires, not before")
  void followerTakesOverAtExpiry() {
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Elector eb = elector(storeB, "b", b);
    eb.start();
    storeA.failAll = true; // a is cut off: its renewals and its release fail

    scheduler.advance(LEASE.minusMillis(1));
    assertThat(ea.isLeader()).isFalse();
    assertThat(eb.isLeader()).isFalse();
    scheduler.advance(Duration.ofMillis(100));

    assertThat(eb.isLeader()).isTrue();
    assertThat(b.terms()).containsExactly("elected 2");
  }

  @Test
  @DisplayName(
      "a leader that is not renewed is invalid at the deadline even if its timers are late")
  void termInvalidAtDeadlineWithoutTimers() {
    Elector e = elector(storeA, "a", a);
    e.start();
    Term term = a.lastTerm();

    clock.advance(DEADLINE.minusMillis(1));
    assertThat(term.isValid()).isTrue();
    assertThat(term.remaining()).isEqualTo(Duration.ofMillis(1));
    clock.advance(Duration.ofMillis(1));
    assertThat(term.isValid()).isFalse();
  }

  @Test
  @DisplayName("onEnd and ended() fire when the term ends")
  void termEndSignals() {
    Elector e = elector(storeA, "a", a);
    e.start();
    Term term = a.lastTerm();
    List<String> seen = new ArrayList<>();
    term.onEnd(() -> seen.add("onEnd"));
    term.ended().thenRun(() -> seen.add("ended"));

    e.stepDown();

    assertThat(seen).containsExactlyInAnyOrder("onEnd", "ended");
  }

  @Test
  @DisplayName("all electors share the scheduler and own no thread")
  void electorsOwnNoThreads() {
    long before =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("baton"))
            .count();
    for (int i = 0; i < 50; i++) {
      Elector.builder(new MemoryLeaseStore()).election("e" + i).candidate("c").build();
    }
    long after =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("baton"))
            .count();
    assertThat(after).isEqualTo(before);
  }

  static Stream<Arguments> badSettings() {
    return Stream.of(
        Arguments.of(
            (Consumer<ElectorBuilder>) b -> b.leaseDuration(Duration.ofSeconds(10)),
            "renewDeadline (election.renew-deadline) must be shorter than leaseDuration (10s), but was 10s"),
        Arguments.of(
            (Consumer<ElectorBuilder>) b -> b.retryPeriod(Duration.ofSeconds(9)),
            "retryPeriod (election.retry-period) × 1.2 must be shorter than renewDeadline (10s, the default), but retryPeriod was 9s"),
        Arguments.of(
            (Consumer<ElectorBuilder>) b -> b.retryPeriod(Duration.ZERO),
            "retryPeriod (election.retry-period) must be positive, but was 0s"),
        Arguments.of(
            (Consumer<ElectorBuilder>) b -> b.leaseDuration(Duration.ofSeconds(-1)),
            "leaseDuration (election.lease-duration) must be positive, but was"),
        Arguments.of(
            (Consumer<ElectorBuilder>) b -> b.election(" "),
            "election.name (election) must not be blank, but was ' '"),
        Arguments.of(
            (Consumer<ElectorBuilder>) b -> b.candidate(""),
            "election.candidate-id (candidate) must not be blank, but was ''"));
  }

  @ParameterizedTest(name = "refuses {1}")
  @MethodSource("badSettings")
  @DisplayName("the builder refuses bad settings, naming the field, the rule and the value")
  void builderRefusesBadSettings(Consumer<ElectorBuilder> change, String message) {
    ElectorBuilder builder =
        Elector.builder(new MemoryLeaseStore()).election("billing").candidate("a");
    change.accept(builder);

    assertThatThrownBy(builder::build)
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(message);
  }

  @Test
  @DisplayName("the builder refuses an election name the store cannot keep")
  void builderAsksTheStoreAboutTheName() {
    LeaseStore picky =
        new ScriptedStore(clock) {
          @Override
          public void checkElectionName(String election) {
            throw new ConfigurationException("election.name: '" + election + "' is not allowed");
          }
        };
    assertThatThrownBy(() -> Elector.builder(picky).election("bad/name").build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("bad/name");
  }

  @Test
  @DisplayName(
      "the builder refuses a lease duration the store cannot grant, also through a forwarding store")
  void builderAsksTheStoreAboutTheLeaseDuration() {
    LeaseStore fifteenOnly =
        new ScriptedStore(clock) {
          @Override
          public void checkLeaseDuration(Duration leaseDuration) {
            if (!leaseDuration.equals(Duration.ofSeconds(15))) {
              throw new ConfigurationException(
                  "leaseDuration: " + leaseDuration.toSeconds() + "s is not granted; use 15s");
            }
          }
        };
    LeaseStore forwarding = new ForwardingLeaseStore(fifteenOnly) {};
    ElectorBuilder twentySeconds =
        Elector.builder(forwarding)
            .election("billing")
            .candidate("a")
            .leaseDuration(Duration.ofSeconds(20));
    assertThatThrownBy(twentySeconds::build)
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("20s is not granted");
    assertThat(
            Elector.builder(forwarding).election("billing").candidate("a").build().leaseDuration())
        .isEqualTo(Duration.ofSeconds(15));
  }

  @Test
  @DisplayName("configure reads the name, candidate and timings from properties")
  void configureFromProperties() {
    java.util.Properties p = new java.util.Properties();
    p.setProperty("election.name", "cron");
    p.setProperty("election.candidate-id", "node-1");
    p.setProperty("election.lease-duration", "6s");
    p.setProperty("election.renew-deadline", "4s");
    p.setProperty("election.retry-period", "1s");

    Elector e = Elector.builder(new MemoryLeaseStore()).configure(ElectionProperties.of(p)).build();

    assertThat(e.election()).isEqualTo("cron");
    assertThat(e.candidate()).isEqualTo("node-1");
    assertThat(e.leaseDuration()).isEqualTo(Duration.ofSeconds(6));
    assertThat(e.renewDeadline()).isEqualTo(Duration.ofSeconds(4));
    assertThat(e.retryPeriod()).isEqualTo(Duration.ofSeconds(1));
  }
}
