package dev.baton.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.Acquisition;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Term;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Scenarios where something goes wrong: a crash, a partition, a stall, an outage, and the lease
 * contract under pressure.
 */
abstract class FailoverScenarios extends BasicScenarios {

  @Test
  @DisplayName(
      "04a crash: when the leader is cut off without releasing, another leads no earlier than its lease allows and no later than lease + retry + allowance")
  void whenTheLeaderCrashesAnotherLeadsWithinTheBoundsOfTheLease() {
    String election = newElection("s04a");
    List<Node> nodes = nodes(3);
    Candidate crashed = startAndAwaitLeading(candidate(nodes.get(0), election));
    List<Candidate> others = startAll(nodes.subList(1, 3), election);
    awaitAgreement(others, crashed);

    long cutAt = System.nanoTime();
    nodes.get(0).faults().cut();
    Candidate next = awaitNewLeader(others, cutAt);

    Call grant = firstGrantAfter(election, cutAt);
    Call lastOfCrashed = history.lastConfirmed(election, crashed.name()).orElseThrow();
    long leaseRanOut = lastOfCrashed.startNanos() + lastOfCrashed.ttl().toNanos();
    log.info(
        "s04a: {} took over {} ms after the crash (lease {} ms)",
        next.name(),
        (grant.endNanos() - cutAt) / 1_000_000,
        lastOfCrashed.ttl().toMillis());
    assertThat(grant.endNanos())
        .as(
            "%s was granted at %s, but %s's lease ran until %s",
            next.name(), at(grant.endNanos()), crashed.name(), at(leaseRanOut))
        .isGreaterThanOrEqualTo(leaseRanOut);
    // Where followers judge expiry by observed time, they may see the last renewal a poll late.
    long polls = fixture.judgesExpiryOnServer() ? 1 : 2;
    Duration bound =
        lastOfCrashed
            .ttl()
            .plus(jittered(timings.retryPeriod()).multipliedBy(polls))
            .plus(timings.allowance());
    assertThat(Duration.ofNanos(grant.endNanos() - cutAt))
        .as("failover after a crash, at most lease + retry + allowance")
        .isLessThanOrEqualTo(bound);

    waiting("until the crashed leader stops leading on its own")
        .until(() -> !crashed.revoked().isEmpty());
    nodes.get(0).faults().heal();
    awaitAgreement(List.of(crashed, others.get(0), others.get(1)), next);
    assertThat(crashed.isLeader()).isFalse();
  }

  @Test
  @DisplayName(
      "04b a candidate that starts after a crashed holder's lease ran out takes it by its first attempt where the server judges expiry")
  void aCandidateTakesALeaseThatRanOutByItsFirstAttempt() {
    String election = newElection("s04b");
    Node crashed = node("node-1");
    Node fresh = node("node-2");
    crashed
        .store()
        .tryAcquire(election, crashed.name(), timings.leaseDuration())
        .lease()
        .orElseThrow();
    List<Long> events = new CopyOnWriteArrayList<>();
    boolean expiryIsWatched = fresh.store().watchReportsExpiry();
    if (expiryIsWatched) {
      fresh
          .store()
          .watch(election, () -> events.add(System.nanoTime()))
          .ifPresent(w -> cleanup(w::close));
    }
    long cutAt = System.nanoTime();
    crashed.faults().cut();

    if (!fixture.judgesExpiryOnServer()) {
      // A follower that judges by observed time waits a lease from its first look; the history
      // check proves it did not take the lease early.
      startAndAwaitLeading(candidate(fresh, election));
      return;
    }
    waiting("until the store shows the lease ran out")
        .until(() -> fresh.store().read(election).isEmpty());
    if (expiryIsWatched) {
      waiting("until the watch reports the expiry", timings.retryPeriod().plus(timings.allowance()))
          .until(() -> events.stream().anyMatch(t -> t - cutAt > 0));
    }
    Candidate newcomer = candidate(fresh, election, timings, b -> b.scheduler(frozenScheduler()));
    startAndAwaitLeading(newcomer);
    assertThat(
            history.calls(
                election, c -> c.kind() == Kind.ACQUIRE && c.candidate().equals(fresh.name())))
        .as("the newcomer's attempts")
        .first()
        .extracting(Call::outcome)
        .isEqualTo(Outcome.OK);
  }

  @Test
  @DisplayName(
      "05 partition: a blackholed leader steps down by its renew deadline, before anyone else leads, and follows after the heal")
  void aPartitionedLeaderStepsDownBeforeAnyoneElseLeadsAndFollowsAfterTheHeal() {
    String election = newElection("s05");
    List<Node> nodes = nodes(3);
    Candidate partitioned = startAndAwaitLeading(candidate(nodes.get(0), election));
    List<Candidate> others = startAll(nodes.subList(1, 3), election);
    awaitAgreement(others, partitioned);
    FencingToken token = partitioned.lastElected().orElseThrow().token();

    long blackholedAt = System.nanoTime();
    nodes.get(0).faults().blackhole();
    waiting(
            "until the partitioned leader steps down",
            timings.renewDeadline().plus(timings.allowance()))
        .until(() -> !partitioned.revoked().isEmpty());
    Candidate next = awaitNewLeader(others, blackholedAt);

    long revoked = revokedAt(election, partitioned.name(), token);
    Call grant = firstGrantAfter(election, blackholedAt);
    assertThat(revoked)
        .as(
            "%s stepped down at %s, %s could lead from %s",
            partitioned.name(), at(revoked), next.name(), at(grant.endNanos()))
        .isLessThan(grant.endNanos());

    nodes.get(0).faults().heal();
    awaitAgreement(List.of(partitioned, others.get(0), others.get(1)), next);
    assertThat(partitioned.isLeader()).isFalse();
  }

  @Test
  @DisplayName(
      "06 stall: a leader stalled longer than its lease does no leader work on waking, and the register refuses its stale token")
  void aLeaderStalledLongerThanItsLeaseDoesNoLeaderWorkOnWaking() {
    String election = newElection("s06");
    List<Node> nodes = nodes(3);
    FencedRegister register = new FencedRegister();
    Node stalledNode = nodes.get(0);
    PausableExecutor executor = stalledNode.executor();
    LeaderWork stalledWork = leaderWork(stalledNode, register, executor);
    Candidate stalled =
        startAndAwaitLeading(
            candidate(
                stalledNode,
                election,
                timings,
                b -> b.executor(executor).scheduler(executor.timer()).whileLeader(stalledWork)));
    List<Candidate> others =
        nodes.subList(1, 3).stream()
            .map(
                n ->
                    candidate(
                        n,
                        election,
                        timings,
                        b -> b.whileLeader(leaderWork(n, register, Runnable::run))))
            .toList();
    others.forEach(c -> c.elector().start());
    awaitAgreement(others, stalled);
    waiting("until the leader's work writes")
        .until(() -> !register.writesBy(stalled.name()).isEmpty());

    Term term = stalled.lastElected().orElseThrow();
    long pausedAt = System.nanoTime();
    executor.pause();
    // A write that passed its validity check just before the stall, and lands after it.
    AtomicReference<Boolean> lateWrite = new AtomicReference<>();
    executor.execute(() -> lateWrite.set(register.write(stalled.name(), term.token())));

    Candidate next = awaitNewLeader(others, pausedAt);
    waiting("until the new leader writes")
        .until(() -> register.highest().orElseThrow().isNewerThan(term.token()));
    assertThat(term.isValid()).as("the stalled leader's term, judged by its own clock").isFalse();
    long resumedAt = System.nanoTime();
    executor.resume();

    waiting("until the stalled leader steps down").until(() -> !stalled.revoked().isEmpty());
    waiting("until the late write lands").until(() -> lateWrite.get() != null);
    assertThat(lateWrite.get())
        .as("the register took a write with the stale token %s", term.token())
        .isFalse();
    assertThat(register.refused())
        .extracting(FencedRegister.Write::writer, FencedRegister.Write::token)
        .containsExactly(tuple(stalled.name(), term.token()));
    assertThat(register.writesBy(stalled.name()))
        .filteredOn(w -> w.accepted() && w.atNanos() - resumedAt > 0)
        .as("writes the stalled leader made on waking")
        .isEmpty();
    assertThat(stalledWork.skippedTicks())
        .as("ticks that ran on waking and found the term invalid")
        .isPositive();
    assertThat(stalledWork.anomalies()).isEmpty();
    awaitAgreement(List.of(stalled, others.get(0), others.get(1)), next);
    assertThat(stalled.isLeader()).isFalse();
  }

  @Test
  @DisplayName(
      "08a the lease contract: candidates hammering tryAcquire are never granted before t0 + ttl of the holder's last confirmed call")
  void candidatesHammeringTryAcquireAreNeverGrantedBeforeTheLeaseRunsOut() {
    String election = newElection("s08a");
    List<Node> nodes = nodes(3);
    Candidate holder = startAndAwaitLeading(candidate(nodes.get(0), election));
    AtomicReference<Lease> won = new AtomicReference<>();
    for (Node n : nodes.subList(1, 3)) {
      String id = "hammer-" + n.name();
      background(
          id,
          running -> {
            while (running.getAsBoolean() && won.get() == null) {
              try {
                n.store()
                    .tryAcquire(election, id, timings.leaseDuration())
                    .lease()
                    .ifPresent(
                        l -> {
                          if (!won.compareAndSet(null, l)) {
                            n.store().release(l);
                          }
                        });
              } catch (LeaseStoreException e) {
                log.debug("s08a: {} could not reach the store: {}", id, e.toString());
              }
              LockSupport.parkNanos(2_000_000);
            }
          });
    }
    long hammering = System.nanoTime();
    awaitRenewals(
        "until the holder renewed three times under fire",
        election,
        3,
        hammering,
        c -> c.outcome() == Outcome.OK);
    assertThat(won.get())
        .as("a lease granted to a hammering candidate while the holder renews")
        .isNull();

    long cutAt = System.nanoTime();
    nodes.get(0).faults().cut();
    Lease lease = waiting("until a hammering candidate is granted").until(won::get, l -> l != null);
    Call grant =
        history.grants(election).stream()
            .filter(g -> g.token().equals(lease.token()))
            .findFirst()
            .orElseThrow();
    Call last = history.lastConfirmed(election, holder.name()).orElseThrow();
    assertThat(grant.endNanos())
        .as(
            "%s granted at %s, the holder's last confirmed call began at %s with ttl %s",
            lease.candidate(), at(grant.endNanos()), at(last.startNanos()), last.ttl())
        .isGreaterThanOrEqualTo(last.startNanos() + last.ttl().toNanos());
    log.info(
        "s08a: {} granted {} ms after the cut",
        lease.candidate(),
        (grant.endNanos() - cutAt) / 1_000_000);
    node(lease.candidate().substring("hammer-".length())).store().release(lease);
  }

  @Test
  @DisplayName(
      "08b the store keeps the contract call by call: refusal names the holder, also to its own id, renew keeps the token, stale renewals and releases change nothing")
  void theStoreKeepsTheContractCallByCall() {
    String election = newElection("s08b");
    LeaseStore x = node("node-1").store();
    LeaseStore y = node("node-2").store();
    Duration ttl = timings.leaseDuration();

    Lease y0 = granted(y.tryAcquire(election, "node-2", ttl));
    y.release(y0);
    Lease x1 = granted(x.tryAcquire(election, "node-1", ttl));
    assertThat(x1.token()).isGreaterThan(y0.token());
    y.release(y0);
    assertHeldBy(y, election, "node-1", x1.token());

    Acquisition refused = y.tryAcquire(election, "node-2", ttl);
    assertThat(refused.isGranted()).as("an acquire while another holds it").isFalse();
    assertThat(refused.holder())
        .hasValueSatisfying(
            h -> assertThat(List.of(h.holder(), h.token())).containsExactly("node-1", x1.token()));

    Lease renewed = x.renew(x1);
    assertThat(renewed.token()).as("a renewal keeps the token").isEqualTo(x1.token());
    Acquisition own = x.tryAcquire(election, "node-1", ttl);
    assertThat(own.isGranted())
        .as("the holder's own acquire while its lease is live (a candidate id names one candidate)")
        .isFalse();
    assertThat(own.holder())
        .hasValueSatisfying(
            h -> assertThat(List.of(h.holder(), h.token())).containsExactly("node-1", x1.token()));
    x.release(renewed);
    Lease x2 = granted(x.tryAcquire(election, "node-1", ttl));
    assertThat(x2.token())
        .as("the holder's acquire after its release begins a new term")
        .isGreaterThan(x1.token());
    assertThatThrownBy(() -> x.renew(renewed))
        .as("renewing a term that was released and granted anew")
        .isInstanceOf(LeaseLostException.class);
    x.release(renewed);
    assertHeldBy(y, election, "node-1", x2.token());

    x.release(x2);
    assertThat(y.read(election)).as("after the release").isEmpty();
    Lease y1 = granted(y.tryAcquire(election, "node-2", ttl));
    assertThat(y1.token()).isGreaterThan(x2.token());
    assertThatThrownBy(() -> x.renew(x2))
        .as("renewing a released lease another candidate now holds")
        .isInstanceOf(LeaseLostException.class);
    y.release(y1);
  }

  @Test
  @DisplayName(
      "10 lose and regain: term work stops when a term is lost and starts afresh with the next one")
  void termWorkStopsWhenATermIsLostAndStartsAfreshWithTheNext() {
    String election = newElection("s10");
    List<Node> nodes = nodes(2);
    FencedRegister register = new FencedRegister();
    LeaderWork work = leaderWork(nodes.get(0), register, Runnable::run);
    LeaderWork otherWork = leaderWork(nodes.get(1), register, Runnable::run);
    Candidate node1 =
        startAndAwaitLeading(candidate(nodes.get(0), election, timings, b -> b.whileLeader(work)));
    Candidate node2 = candidate(nodes.get(1), election, timings, b -> b.whileLeader(otherWork));
    node2.elector().start();
    awaitAgreement(List.of(node1, node2), node1);
    Term first = node1.lastElected().orElseThrow();
    waiting("until the first term's work writes")
        .until(() -> register.highest().filter(first.token()::equals).isPresent());

    long cutAt = System.nanoTime();
    nodes.get(0).faults().cut();
    awaitNewLeader(List.of(node2), cutAt);
    waiting("until the first term's work stopped").until(() -> work.stopped().contains(first));
    assertThat(first.isEnded()).isTrue();
    assertThat(first.ended().toCompletableFuture()).isDone();

    nodes.get(0).faults().heal();
    awaitAgreement(List.of(node1, node2), node2);
    long handingBack = System.nanoTime();
    node2.elector().close();
    awaitNewLeader(List.of(node1), handingBack);
    Term second = node1.lastElected().orElseThrow();
    waiting("until the second term's work writes")
        .until(() -> register.highest().filter(second.token()::equals).isPresent());

    assertThat(second.token()).isGreaterThan(first.token());
    assertThat(work.started()).containsExactly(first, second);
    assertThat(work.stopped()).containsExactly(first);
    assertThat(node1.elected()).containsExactly(first, second);
    assertThat(node1.revoked()).containsExactly(first);
    assertThat(work.anomalies()).isEmpty();
    assertThat(otherWork.anomalies()).isEmpty();
    assertThat(register.refused())
        .as("writes refused: some leader wrote while another's term was valid")
        .isEmpty();
  }

  @Test
  @DisplayName(
      "11 outage: the leader steps down by its deadline, and leadership returns after the store does without restarting any elector")
  void afterAnOutageLeadershipReturnsWithoutRestartingAnyElector() throws Exception {
    String election = newElection("s11");
    List<Node> nodes = nodes(3);
    Candidate leader = startAndAwaitLeading(candidate(nodes.get(0), election));
    List<Candidate> others = startAll(nodes.subList(1, 3), election);
    List<Candidate> all = List.of(leader, others.get(0), others.get(1));
    awaitAgreement(all, leader);

    long outageAt = System.nanoTime();
    fixture.serverOutage();
    waiting("until the leader steps down", timings.renewDeadline().plus(timings.allowance()))
        .until(() -> !leader.revoked().isEmpty());
    waiting("until every candidate has failed to reach the store")
        .until(
            () ->
                all.stream()
                    .allMatch(
                        c ->
                            !history
                                .calls(
                                    election,
                                    call ->
                                        call.candidate().equals(c.name())
                                            && call.outcome() == Outcome.FAILED
                                            && call.startNanos() - outageAt > 0)
                                .isEmpty()));
    assertThat(all).noneMatch(Candidate::isLeader);

    long restoredAt = System.nanoTime();
    fixture.restore();
    Candidate back = awaitNewLeader(all, restoredAt);
    log.info(
        "s11: {} leads again {} ms after the store returned (outage stops the server: {})",
        back.name(),
        (firstGrantAfter(election, restoredAt).endNanos() - restoredAt) / 1_000_000,
        fixture.outageStopsServer());
    assertThat(history.grants(election))
        .filteredOn(g -> g.startNanos() - outageAt > 0 && g.endNanos() - restoredAt < 0)
        .as("grants during the outage")
        .isEmpty();
    awaitAgreement(all, back);
    assertThat(all).allMatch(c -> c.elector().isRunning());
  }

  /**
   * How long the leader's work takes to stop in scenario 16: long enough for any follower to try.
   */
  static final Duration SLOW_STOP = Duration.ofSeconds(1);

  @Test
  @DisplayName(
      "16a slow stop: a renewal that returns after the renew deadline lets nobody in before the old work stopped (renewals one by one)")
  void aLateRenewalLetsNobodyInBeforeTheOldWorkStopped() {
    lateRenewalDuringASlowStop("s16a", 1);
  }

  @Test
  @DisplayName(
      "16b slow stop: a renewal that returns after the renew deadline lets nobody in before the old work stopped (batched renewals)")
  void aLateBatchedRenewalLetsNobodyInBeforeTheOldWorkStopped() {
    lateRenewalDuringASlowStop("s16b", Math.max(2, node("node-1").store().renewBatchLimit()));
  }

  /**
   * The leader's renewal is held on its way until the renew deadline has ended the term, then
   * reaches the store and succeeds there: the lease is the old leader's again, while its work takes
   * {@link #SLOW_STOP} to stop. Whatever the elector does with that renewed lease, it may give it
   * up only once the work stopped.
   */
  private void lateRenewalDuringASlowStop(String scenario, int batchLimit) {
    String election = newElection(scenario);
    List<Node> nodes = nodes(2);
    HeldRenewals door =
        cleanup(new HeldRenewals(nodes.get(0).store(), batchLimit, timings.patience()));
    FaultyUserCode work = FaultyUserCode.slowToStop(SLOW_STOP, history);
    Candidate leader =
        startAndAwaitLeading(
            candidate(nodes.get(0), door, election, timings, b -> b.whileLeader(work)));
    Candidate follower = candidate(nodes.get(1), election);
    follower.elector().start();
    awaitAgreement(List.of(leader, follower), leader);
    Term term = leader.toldTerm().orElseThrow();

    door.hold();
    waiting("until a renewal of " + leader.name() + " is held").until(() -> door.held() > 0);
    waiting(
            "until the renew deadline ends " + leader.name() + "'s term",
            timings.renewDeadline().plus(timings.allowance()))
        .until(term::isEnded);
    long lateAt = System.nanoTime();
    door.letThrough();

    long stopped =
        waiting("until " + leader.name() + "'s work stopped")
            .until(() -> work.stoppedAt(term), Optional::isPresent)
            .orElseThrow();
    // Either may lead next: the old leader holds the lease again, and gives it back once its work
    // stopped.
    Term next = awaitNewTerm(List.of(leader, follower), lateAt);
    List<Call> late =
        history.calls(
            election,
            c ->
                c.kind() == Kind.RENEW
                    && c.token().equals(term.token())
                    && c.startNanos() - lateAt >= 0);
    List<Call> early =
        history.grants(election).stream()
            .filter(g -> g.candidate().equals(follower.name()) && g.endNanos() - stopped < 0)
            .toList();
    log.info(
        "{}: the held renewal {}; {} leads next with token {}, the old work stopped {} ms after the renewal was let through",
        scenario,
        late.isEmpty() ? "never reached the store" : late.get(0).outcome(),
        next.candidate(),
        next.token(),
        (stopped - lateAt) / 1_000_000);
    assertThat(
            early.stream()
                .map(g -> g.candidate() + " granted token " + g.token() + " at " + at(g.endNanos()))
                .toList())
        .as(
            "grants to %s while %s's work for token %s was still stopping (until %s); the held renewal was let through at %s and answered %s",
            follower.name(),
            leader.name(),
            term.token(),
            at(stopped),
            at(lateAt),
            late.stream().map(c -> c.outcome() + " at " + at(c.endNanos())).toList())
        .isEmpty();
    assertThat(leader.revoked()).as("terms revoked of %s", leader.name()).startsWith(term);
    Candidate leading = next.candidate().equals(leader.name()) ? leader : follower;
    awaitAgreement(List.of(leader, follower), leading);
  }

  @Test
  @DisplayName(
      "18 lease lost: a leader whose lease was released behind its back and granted anew under another token steps down at its next renewal, before its renew deadline")
  void aLeaderWhoseLeaseWasGrantedAnewStepsDownAtItsNextRenewal() {
    String election = newElection("s18");
    Node node = node("node-1");
    HeldRenewals door = cleanup(new HeldRenewals(node.store(), 1, timings.patience()));
    Candidate leader = startAndAwaitLeading(candidate(node, door, election, timings, b -> {}));
    Term term = leader.toldTerm().orElseThrow();

    // Its next renewal waits at the door, holding the lease as the elector has it now, while the
    // lease is released behind its back and granted anew, as an operator's tool might: unrecorded,
    // since the history would rightly call a grant while the work still runs a breach.
    door.hold();
    Lease current =
        waiting("until a renewal of " + leader.name() + " is held")
            .until(door::heldLease, Optional::isPresent)
            .orElseThrow();
    node.rawStore().release(current);
    Lease anew =
        granted(node.rawStore().tryAcquire(election, "s18-operator", timings.leaseDuration()));
    // anew is left to run out: the election is this scenario's own, and releasing it afterwards
    // would be a store call that may time out on a busy machine, failing a scenario whose checks
    // had all passed.
    long takenAt = System.nanoTime();
    door.letThrough();
    long revoked = revokedAt(election, leader.name(), term.token());

    long deadline =
        history.calls(election, c -> c.confirmedLease() && c.token().equals(term.token())).stream()
                .mapToLong(Call::startNanos)
                .max()
                .orElseThrow()
            + timings.renewDeadline().toNanos();
    List<Call> refusals =
        history.calls(
            election,
            c ->
                c.kind() == Kind.RENEW
                    && c.outcome() == Outcome.REFUSED
                    && c.token().equals(term.token()));
    assertThat(refusals)
        .as(
            "renewals of token %s the store refused after it granted %s at %s",
            term.token(), anew.token(), at(takenAt))
        .isNotEmpty();
    long firstRefusal = refusals.stream().mapToLong(Call::endNanos).min().orElseThrow();
    log.info(
        "s18: the store answered 'lease lost' {} ms after the take-over; onRevoked {} ms after that, {} ms before the renew deadline",
        (firstRefusal - takenAt) / 1_000_000,
        (revoked - firstRefusal) / 1_000_000,
        (deadline - revoked) / 1_000_000);
    assertThat(
            history
                .calls(
                    election,
                    c ->
                        c.kind() == Kind.RENEW
                            && c.token().equals(term.token())
                            && c.startNanos() - firstRefusal > 0)
                .stream()
                .map(c -> at(c.startNanos()) + " " + c.outcome())
                .toList())
        .as(
            "renewals of token %s sent after the store answered 'lease lost' at %s: a lost lease is no passing failure",
            term.token(), at(firstRefusal))
        .isEmpty();
    assertThat(revoked)
        .as(
            "%s was revoked at %s; the store answered 'lease lost' at %s, and the renew deadline was %s",
            leader.name(), at(revoked), at(firstRefusal), at(deadline))
        .isLessThan(deadline);
  }

  @Test
  @DisplayName(
      "20 lease deleted: a leader whose lease is deleted behind its back stops its work within one watch delivery where the store pushes the loss, at its next renewal where it polls, then campaigns again")
  void aLeaderWhoseLeaseIsDeletedStopsItsWorkAtOnceWhereTheStorePushes() throws Exception {
    Assumptions.assumeTrue(
        fixture.canDeleteLeases(),
        () ->
            fixture.getClass().getSimpleName()
                + " cannot delete a lease behind its holder's back (ConformanceFixture.deleteLease); scenario 20 is skipped");
    String election = newElection("s20");
    Node node = node("node-1");
    boolean pushes = fixture.pushesLeaseLoss();
    HeldRenewals door =
        cleanup(new HeldRenewals(node.store(), 1, timings.patience())).withLeaseWatch();
    FencedRegister register = new FencedRegister();
    LeaderWork work = leaderWork(node, register, Runnable::run);
    Candidate leader =
        startAndAwaitLeading(candidate(node, door, election, timings, b -> b.whileLeader(work)));
    Term term = leader.toldTerm().orElseThrow();
    waiting("until the leader's work writes")
        .until(() -> register.highest().filter(term.token()::equals).isPresent());

    if (pushes) {
      // Its next renewal waits at the door, so only the store's push can end the term in time.
      door.hold();
      waiting("until a renewal of " + leader.name() + " is held")
          .until(door::heldLease, Optional::isPresent);
    }
    long deletedAt = System.nanoTime();
    fixture.deleteLease(election);
    // Where the server judges expiry, the deletion ends the lease as a release of its term would:
    // recorded as one, so that the history judges the leader's next grant against it and not
    // against the deleted lease's TTL. Where followers judge by observed time, a store that saw
    // the lease keeps treating it as live until it runs out (a deleted Kubernetes Lease), as the
    // history does without a record of the deletion.
    if (fixture.judgesExpiryOnServer()) {
      history.recordCall(
          new Call(
              election,
              "operator",
              leader.name(),
              Kind.RELEASE,
              deletedAt,
              System.nanoTime(),
              Outcome.OK,
              term.token(),
              null));
    }
    long stopped = revokedAt(election, leader.name(), term.token());
    int heldWhenStopped = door.held();
    door.letThrough();
    List<Call> refusedFirst =
        history.calls(
            election,
            c ->
                c.kind() == Kind.RENEW
                    && c.outcome() == Outcome.REFUSED
                    && c.token().equals(term.token())
                    && c.endNanos() - stopped <= 0);
    log.info(
        "s20: the work of token {} stopped {} ms after its lease was deleted ({})",
        term.token(),
        (stopped - deletedAt) / 1_000_000,
        pushes ? "the store pushes the loss" : "the store does not push it");
    assertThat(work.stopped()).as("terms whose work stopped").contains(term);
    if (pushes) {
      assertThat(heldWhenStopped)
          .as(
              "renewals held at the door when the work stopped: the store should have told the leader itself")
          .isEqualTo(1);
      assertThat(refusedFirst).as("renewals refused before the term ended").isEmpty();
      assertThat(Duration.ofNanos(stopped - deletedAt))
          .as("from the deletion to the work's stop, where the store pushes the loss")
          .isLessThan(timings.retryPeriod());
    } else {
      // Usually a refused renewal ends the term here; a store may still have learned it another
      // way (PostgreSQL reads its leader's row once when the watch starts, which may come after
      // the deletion), so only the bound is checked.
      assertThat(Duration.ofNanos(stopped - deletedAt))
          .as("from the deletion to the work's stop, at the next renewal")
          .isLessThanOrEqualTo(timings.retryPeriod().plus(timings.allowance()));
    }
    // The election is free: the leader campaigns again at once, under a higher token.
    Term next =
        waiting("until " + leader.name() + " leads again")
            .until(() -> leader.toldTerm().filter(t -> t != term), Optional::isPresent)
            .orElseThrow();
    assertThat(next.token()).isGreaterThan(term.token());
  }

  // ---------------------------------------------------------------- helpers

  static Lease granted(Acquisition a) {
    return a.lease().orElseThrow(() -> new AssertionError("expected a grant, but " + a));
  }

  static void assertHeldBy(LeaseStore store, String election, String holder, FencingToken token) {
    assertThat(store.read(election))
        .as("the holder of %s", election)
        .hasValueSatisfying(
            r -> assertThat(List.of(r.holder(), r.token())).containsExactly(holder, token));
  }

  static Duration jittered(Duration retry) {
    return Duration.ofNanos((long) (retry.toNanos() * 1.2));
  }
}
