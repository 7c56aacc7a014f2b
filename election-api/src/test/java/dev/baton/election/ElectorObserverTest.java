package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What an observer is told, on a fake clock with store calls inline. */
class ElectorObserverTest {

  static final Duration RETRY = Duration.ofSeconds(2);

  final FakeClock clock = new FakeClock();
  final ManualScheduler scheduler = new ManualScheduler(clock);
  final MemoryLeaseStore shared = new MemoryLeaseStore(clock, java.time.Clock.systemUTC());
  final ScriptedStore storeA = new ScriptedStore(shared);
  final ScriptedStore storeB = new ScriptedStore(shared);
  final List<Elector> electors = new CopyOnWriteArrayList<>();

  final class Told implements ElectorObserver {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void termStarted(Term term, Optional<Duration> withoutLeader) {
      events.add(
          "started "
              + term.token()
              + (withoutLeader.isPresent()
                  ? " after " + withoutLeader.get().toMillis() + " ms"
                  : " first"));
    }

    @Override
    public void termEnded(Term term, StepDownReason reason) {
      events.add("ended " + term.token() + " " + reason);
    }

    @Override
    public void renewed(Term term, Duration latency) {
      events.add("renewed " + term.token());
    }

    @Override
    public void renewalFailed(Term term, RuntimeException cause) {
      events.add("renewal failed " + term.token());
    }

    @Override
    public void campaignFailed(RuntimeException cause) {
      events.add("campaign failed");
    }
  }

  @AfterEach
  void closeAll() {
    storeA.failAll = false;
    electors.forEach(Elector::close);
  }

  Elector elector(ScriptedStore store, String candidate, ElectorObserver observer) {
    Elector e =
        Elector.builder(store)
            .election("billing")
            .candidate(candidate)
            .clock(clock)
            .scheduler(scheduler)
            .executor(Runnable::run)
            .ownPool(Runnable::run)
            .observer(observer)
            .observer(
                new ElectorObserver() {
                  @Override
                  public void renewed(Term term, Duration latency) {
                    throw new IllegalStateException("observer bug");
                  }
                })
            .build();
    electors.add(e);
    return e;
  }

  @Test
  @DisplayName(
      "an observer is told of terms, renewals, failures and why a term ended; one that throws costs nothing")
  void observerIsToldWhatHappens() {
    Told a = new Told();
    Told b = new Told();
    Elector ea = elector(storeA, "a", a);
    Elector eb = elector(storeB, "b", b);
    ea.start();
    eb.start();
    scheduler.advance(RETRY);
    storeA.failNext = () -> new LeaseStoreException("billing", "store down (scripted)");
    scheduler.advance(RETRY);

    ea.stepDown(); // b's watch sees the release at once: no time passes without a leader
    storeA.failAll = true;
    scheduler.advance(RETRY.multipliedBy(3));

    assertThat(a.events)
        .startsWith(
            "started 1 first",
            "renewed 1",
            "renewal failed 1",
            "ended 1 STEPPED_DOWN",
            "campaign failed");
    assertThat(b.events).startsWith("started 2 after 0 ms").doesNotContain("campaign failed");
    assertThat(ea.isLeader()).isFalse();
    assertThat(eb.isLeader()).isTrue();
  }

  @Test
  @DisplayName("workFailed ends its own term as WORK_FAILED, and a term already over is left alone")
  void workFailedEndsOnlyItsOwnTerm() {
    Told a = new Told();
    Elector ea = elector(storeA, "a", a);
    ea.start();
    Term first = ea.currentTerm().orElseThrow();

    ea.workFailed(first);
    scheduler.advance(RETRY.multipliedBy(3));
    Term second = ea.currentTerm().orElseThrow();
    // Late news of the first term's failure must not end the second.
    ea.workFailed(first);
    scheduler.advance(RETRY);

    assertThat(a.events)
        .contains("ended " + first.token() + " WORK_FAILED")
        .doesNotContain("ended " + second.token() + " WORK_FAILED");
    assertThat(second.token().isNewerThan(first.token())).isTrue();
    assertThat(ea.currentTerm()).contains(second);
  }
}
