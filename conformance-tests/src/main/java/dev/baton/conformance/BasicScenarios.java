package dev.baton.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.ElectorBuilder;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.Subscription;
import dev.baton.election.Term;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Scenarios of a healthy store: who leads, how fast, handing over, tokens, many elections,
 * configuration.
 */
abstract class BasicScenarios extends ConformanceSupport {

  @Test
  @DisplayName("01a exactly one of three candidates started together leads, and all agree who")
  void exactlyOneOfThreeCandidatesLeadsAndAllAgreeWho() {
    exactlyOneLeads(3, "s01a");
  }

  @Test
  @DisplayName("01b exactly one of ten candidates started together leads, and all agree who")
  void exactlyOneOfTenCandidatesLeadsAndAllAgreeWho() {
    exactlyOneLeads(10, "s01b");
  }

  private void exactlyOneLeads(int count, String scenario) {
    String election = newElection(scenario);
    List<Candidate> all = startAll(nodes(count), election);
    Candidate leader = awaitAgreedSoleLeader(all);

    long agreed = System.nanoTime();
    awaitRenewals(
        "until " + leader.name() + " renewed twice more",
        election,
        2,
        agreed,
        c -> c.outcome() == Outcome.OK);
    List<Call> grants = history.grants(election);
    assertThat(grants)
        .as("grants while one leader renews")
        .last()
        .extracting(Call::candidate)
        .isEqualTo(leader.name());
    // Usually the only grant. On a machine too busy for a renewal to meet its deadline, a leader
    // steps down, as it must, and another is elected: then every earlier grant must be a term
    // that ended before this leader's began (the end-of-scenario check proves that no two terms
    // overlapped and tokens grew).
    for (Call earlier : grants.subList(0, grants.size() - 1)) {
      Candidate before =
          all.stream().filter(c -> c.name().equals(earlier.candidate())).findFirst().orElseThrow();
      assertThat(before.revoked())
          .as("the ended terms of %s, granted before %s led", before.name(), leader.name())
          .extracting(t -> t.token().value())
          .contains(earlier.token().value());
    }
    assertThat(all).filteredOn(Candidate::isLeader).containsExactly(leader);
    assertThat(all)
        .allSatisfy(
            c ->
                assertThat(c.elected().stream().filter(t -> !c.revoked().contains(t)))
                    .as("live terms of %s", c.name())
                    .hasSize(c == leader ? 1 : 0));
  }

  @Test
  @DisplayName("02 the first leader is elected by its first attempt, without waiting for a tick")
  void theFirstLeaderIsElectedByItsFirstAttemptWithoutWaitingForATick() {
    String election = newElection("s02");
    // Timers that never fire: whatever happens below happens at once on start, not on a tick.
    ScheduledExecutorService frozen = frozenScheduler();
    List<Candidate> all =
        nodes(3).stream()
            .map(n -> candidate(n, election, timings, b -> b.scheduler(frozen)))
            .toList();
    long started = System.nanoTime();
    all.forEach(c -> c.elector().start());

    Candidate leader = awaitSoleLeader(all);
    log.info(
        "s02: {} elected {} ms after start",
        leader.name(),
        (System.nanoTime() - started) / 1_000_000);
    List<Call> attempts =
        history.calls(
            election, c -> c.kind() == Kind.ACQUIRE && c.candidate().equals(leader.name()));
    assertThat(attempts)
        .as("the leader's attempts")
        .first()
        .extracting(Call::outcome)
        .isEqualTo(Outcome.OK);
    awaitAgreement(all, leader);
  }

  @Test
  @DisplayName(
      "03a graceful handover: when the leader closes, it stops first and another leads before its lease could have run out")
  void whenTheLeaderClosesAnotherLeadsWithoutWaitingForItsLeaseToRunOut() {
    String election = newElection("s03a");
    List<Node> nodes = nodes(3);
    Candidate first = startAndAwaitLeading(candidate(nodes.get(0), election));
    List<Candidate> others = startAll(nodes.subList(1, 3), election);
    awaitAgreement(others, first);

    long closing = System.nanoTime();
    first.elector().close();
    Candidate next = awaitNewLeader(others, closing);

    Call grant = firstGrantAfter(election, closing);
    Call lastOfFirst = history.lastConfirmed(election, first.name()).orElseThrow();
    long revoked = revokedAt(election, first.name(), first.elected().get(0).token());
    log.info(
        "s03a: {} took over {} ms after close began",
        next.name(),
        (grant.endNanos() - closing) / 1_000_000);
    assertThat(revoked)
        .as(
            "%s's onRevoked (%s) came before %s could lead (%s)",
            first.name(), at(revoked), next.name(), at(grant.endNanos()))
        .isLessThan(grant.endNanos());
    assertThat(grant.endNanos())
        .as(
            "%s was granted at %s, before %s's lease ran out at %s: the release let it in",
            next.name(),
            at(grant.endNanos()),
            first.name(),
            at(lastOfFirst.startNanos() + lastOfFirst.ttl().toNanos()))
        .isLessThan(lastOfFirst.startNanos() + lastOfFirst.ttl().toNanos());
    assertThat(first.revoked()).hasSize(1);
  }

  @Test
  @DisplayName(
      "03b a store that can watch wakes a watcher after a release; one that cannot says so")
  void aStoreThatCanWatchWakesAWatcherAfterARelease() {
    String election = newElection("s03b");
    Node holder = node("node-1");
    Node watcher = node("node-2");
    List<Long> events = new CopyOnWriteArrayList<>();
    Optional<Subscription> watch =
        watcher.store().watch(election, () -> events.add(System.nanoTime()));
    watch.ifPresent(w -> cleanup(w::close));
    if (!fixture.canWatch()) {
      assertThat(watch)
          .as("the fixture says its store cannot watch, so watch() must be empty")
          .isEmpty();
      return;
    }
    assertThat(watch).as("the fixture says its store can watch").isPresent();

    // A watch may go live a little after watch() returns: change the record until it reports.
    waiting("until the watch reports a change")
        .until(
            () -> {
              Lease l =
                  holder
                      .store()
                      .tryAcquire(election, holder.name(), timings.leaseDuration())
                      .lease()
                      .orElseThrow();
              holder.store().release(l);
              return !events.isEmpty();
            });
    Lease lease =
        holder
            .store()
            .tryAcquire(election, holder.name(), timings.leaseDuration())
            .lease()
            .orElseThrow();
    long releasing = System.nanoTime();
    holder.store().release(lease);
    waiting(
            "until the watcher is woken after the release",
            timings.retryPeriod().plus(timings.allowance()))
        .until(() -> events.stream().anyMatch(t -> t - releasing >= 0));
  }

  @Test
  @DisplayName(
      "07a every grant begins a term with a higher token, also a new grant to the candidate that held it last")
  void everyGrantBeginsATermWithAHigherTokenAlsoAGrantToTheLastHolder() {
    String election = newElection("s07a");
    List<Node> nodes = nodes(2);
    List<FencingToken> tokens = new ArrayList<>();
    Lease held = null;
    for (int i = 0; i < 51; i++) {
      Node next = nodes.get(i % 3 == 0 ? 0 : i % 2);
      if (held != null) {
        // A live lease is never granted again, not even to its holder: it gives it back first.
        node(held.candidate()).store().release(held);
      }
      held =
          next.store()
              .tryAcquire(election, next.name(), timings.leaseDuration())
              .lease()
              .orElseThrow(() -> new AssertionError(next.name() + " was refused a free lease"));
      tokens.add(held.token());
    }
    node(held.candidate()).store().release(held);
    assertStrictlyIncreasing(tokens);
  }

  @Test
  @DisplayName("07b fencing tokens strictly increase over fifty successive changes of leader")
  void fencingTokensStrictlyIncreaseOverFiftyChangesOfLeader() {
    String election = newElection("s07b");
    // Stepping down lets the next candidate in at once; a short retry keeps polling stores quick.
    Timings quick = timings.withRetryPeriod(min(timings.retryPeriod(), Duration.ofMillis(100)));
    List<Candidate> all =
        nodes(3).stream().map(n -> candidate(n, election, quick, b -> {})).toList();
    all.forEach(c -> c.elector().start());
    Term term = awaitSoleLeader(all).toldTerm().orElseThrow();
    List<FencingToken> tokens = new ArrayList<>(List.of(term.token()));
    for (int change = 0; change < 50; change++) {
      String leader = term.candidate();
      long since = System.nanoTime();
      all.stream()
          .filter(c -> c.name().equals(leader))
          .findFirst()
          .orElseThrow()
          .elector()
          .stepDown();
      term = awaitNewTerm(all, since);
      tokens.add(term.token());
    }
    assertStrictlyIncreasing(tokens);
  }

  @Test
  @DisplayName("09 several elections on one store fail over independently")
  void severalElectionsOnOneStoreFailOverIndependently() {
    List<Node> nodes = nodes(3);
    List<String> elections = List.of(newElection("s09a"), newElection("s09b"), newElection("s09c"));
    Map<String, List<Candidate>> byElection = new LinkedHashMap<>();
    for (int i = 0; i < 3; i++) {
      // Node i leads election i: its elector starts first.
      String e = elections.get(i);
      Candidate first = startAndAwaitLeading(candidate(nodes.get(i), e));
      List<Candidate> all = new ArrayList<>(List.of(first));
      for (int j = 0; j < 3; j++) {
        if (j != i) {
          Candidate c = candidate(nodes.get(j), e);
          c.elector().start();
          all.add(c);
        }
      }
      awaitAgreement(all, first);
      byElection.put(e, all);
    }

    // Closing one elector fails over its election only.
    long closing = System.nanoTime();
    Candidate closed = byElection.get(elections.get(0)).get(0);
    closed.elector().close();
    awaitNewLeader(byElection.get(elections.get(0)).subList(1, 3), closing);
    for (String e : elections.subList(1, 3)) {
      Candidate leader = byElection.get(e).get(0);
      assertThat(leader.isLeader()).as("%s still leads %s", leader.name(), e).isTrue();
      assertThat(leader.revoked()).as("revoked terms of %s in %s", leader.name(), e).isEmpty();
      assertThat(grantsAfter(e, closing))
          .as("grants of %s after another election failed over", e)
          .isEmpty();
    }

    // Cutting one node fails over every election it leads, and no other.
    Node cut = nodes.get(1);
    Map<String, Candidate> leaders = new LinkedHashMap<>();
    byElection.forEach(
        (e, all) ->
            leaders.put(
                e, awaitSoleLeader(all.stream().filter(c -> c.elector().isRunning()).toList())));
    long cutAt = System.nanoTime();
    cut.faults().cut();
    leaders.forEach(
        (e, leader) -> {
          List<Candidate> reachable =
              byElection.get(e).stream()
                  .filter(c -> c.node() != cut && c.elector().isRunning())
                  .toList();
          if (leader.node() == cut) {
            awaitNewLeader(reachable, cutAt);
          }
        });
    leaders.forEach(
        (e, leader) -> {
          if (leader.node() != cut) {
            assertThat(leader.isLeader())
                .as("%s still leads %s while %s is cut off", leader.name(), e, cut)
                .isTrue();
            assertThat(grantsAfter(e, cutAt))
                .as("grants of %s, which %s did not lead", e, cut)
                .isEmpty();
          }
        });
  }

  @Test
  @DisplayName(
      "14 bad configuration is refused with a message that names the setting, the value and what is accepted")
  void badConfigurationIsRefusedWithAClearMessage() {
    LeaseStore store = node("node-1").store();
    String election = newElection("s14");
    Function<Duration[], ElectorBuilder> timed =
        d ->
            Elector.builder(store)
                .election(election)
                .candidate("node-1")
                .leaseDuration(d[0])
                .renewDeadline(d[1])
                .retryPeriod(d[2]);

    assertThatThrownBy(() -> Elector.builder(store).candidate("node-1").build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(ElectionProperties.NAME);
    assertThatThrownBy(() -> Elector.builder(store).election("  ").build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(ElectionProperties.NAME)
        .hasMessageContaining("blank");
    assertThatThrownBy(
            () ->
                timed
                    .apply(
                        new Duration[] {
                          Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(2)
                        })
                    .build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("renewDeadline")
        .hasMessageContaining("leaseDuration")
        .hasMessageContaining("10s");
    assertThatThrownBy(
            () ->
                timed
                    .apply(
                        new Duration[] {
                          Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(9)
                        })
                    .build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("retryPeriod")
        .hasMessageContaining("9s");
    assertThatThrownBy(
            () ->
                timed
                    .apply(
                        new Duration[] {
                          Duration.ZERO, Duration.ofSeconds(10), Duration.ofSeconds(2)
                        })
                    .build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("leaseDuration")
        .hasMessageContaining("positive");

    Properties badDuration = new Properties();
    badDuration.setProperty(ElectionProperties.NAME, election);
    badDuration.setProperty(ElectionProperties.LEASE_DURATION, "fifteen");
    assertThatThrownBy(
            () -> Elector.builder(store).configure(ElectionProperties.of(badDuration)).build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(ElectionProperties.LEASE_DURATION)
        .hasMessageContaining("fifteen")
        .hasMessageContaining("15s");

    Properties unknownBackend = new Properties();
    unknownBackend.setProperty(ElectionProperties.BACKEND, "no-such-backend");
    assertThatThrownBy(() -> ElectionProperties.of(unknownBackend).openStore())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(ElectionProperties.BACKEND)
        .hasMessageContaining("no-such-backend")
        .hasMessageContaining("memory");

    for (String refused : fixture.refusedElectionNames()) {
      assertThatThrownBy(() -> Elector.builder(store).election(refused).candidate("node-1").build())
          .as(
              "an elector for the election name '%s', which the fixture says the store refuses",
              refused)
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining(refused);
    }
  }

  // ---------------------------------------------------------------- helpers

  final long revokedAt(String election, String candidate, FencingToken token) {
    return waiting("until " + candidate + "'s term " + token + " is revoked")
        .until(
            () ->
                history.terms(election).stream()
                    .filter(t -> t.candidate().equals(candidate) && t.token().equals(token))
                    .findFirst()
                    .flatMap(History.TermRecord::revokedNanos),
            Optional::isPresent)
        .orElseThrow();
  }

  final List<Call> grantsAfter(String election, long sinceNanos) {
    return history.grants(election).stream().filter(g -> g.endNanos() - sinceNanos > 0).toList();
  }

  static void assertStrictlyIncreasing(List<FencingToken> tokens) {
    for (int i = 1; i < tokens.size(); i++) {
      assertThat(tokens.get(i)).as("token %d of %s", i, tokens).isGreaterThan(tokens.get(i - 1));
    }
  }

  static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
