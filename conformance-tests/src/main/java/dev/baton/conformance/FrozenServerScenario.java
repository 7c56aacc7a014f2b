package dev.baton.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Elector;
import dev.baton.election.FencingToken;
import dev.baton.election.LeaseStore;
import dev.baton.election.Term;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server frozen with SIGSTOP for longer than the lease while electors run (fault 2 of issue 16):
 * the leader keeps its term or steps down by its renew deadline, nobody is granted while the frozen
 * server still holds a live lease, and after SIGCONT one elector leads and all agree, with none
 * restarted. {@link #close} checks the recorded history as the conformance suite does.
 */
public final class FrozenServerScenario implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(FrozenServerScenario.class);

  /** What a freeze cost, in milliseconds from the moment of the SIGSTOP or SIGCONT. */
  public record Figures(
      FencingToken before,
      Optional<Long> steppedDownAfterFreeze,
      long frozenFor,
      FencingToken after,
      long allAgreeAfterThaw) {

    public boolean keptTheTerm() {
      return steppedDownAfterFreeze.isEmpty();
    }
  }

  private final String election;
  private final Timings timings;
  private final Duration longestCall;
  private final History history = new History();
  private final List<Candidate> candidates = new ArrayList<>();

  /** One elector per store, named node-1, node-2, ...; all started. */
  public FrozenServerScenario(String election, Timings timings, List<LeaseStore> stores) {
    this(election, timings, stores, timings.renewDeadline());
  }

  /**
   * As {@link #FrozenServerScenario(String, Timings, List)}, for stores whose calls to a frozen
   * server may last up to {@code longestCall} instead of less than the renew deadline.
   */
  public FrozenServerScenario(
      String election, Timings timings, List<LeaseStore> stores, Duration longestCall) {
    this.election = election;
    this.timings = timings;
    this.longestCall = longestCall;
    for (int i = 0; i < stores.size(); i++) {
      String name = "node-" + (i + 1);
      // No fault switch: the fault here is the frozen server.
      Node node =
          new Node(name, new NodeConnection(stores.get(i), FaultInjector.all(List.of())), history);
      Candidate c = new Candidate(node, election, history);
      c.attach(
          Elector.builder(node.store())
              .election(election)
              .candidate(name)
              .leaseDuration(timings.leaseDuration())
              .renewDeadline(timings.renewDeadline())
              .retryPeriod(timings.retryPeriod())
              .listener(c)
              .build());
      candidates.add(c);
    }
    candidates.forEach(c -> c.elector().start());
  }

  /**
   * Once one elector leads, freezes the server {@code serverFor} picks for the leader's name, thaws
   * it once the freeze outlasted the lease, and checks what must hold either way.
   *
   * @param leaderMustStepDown true when the frozen server is the whole store, so that no renewal
   *     can get through: the leader must step down and nobody may be granted until the thaw
   */
  public Figures freezeLongerThanTheLease(
      Function<String, ? extends FreezableServer> serverFor, boolean leaderMustStepDown) {
    Candidate leader = awaitSoleCurrentLeader();
    Term term = leader.toldTerm().orElseThrow();
    FreezableServer server = serverFor.apply(leader.name());
    String what = server.toString();
    server.freeze();
    long frozenAt = System.nanoTime();
    long thawedAt;
    try {
      waiting(
              "until "
                  + leader.name()
                  + " renewed term "
                  + term.token()
                  + " past its renew deadline, or stepped down")
          .until(
              () ->
                  renewedAfter(leader, term.token(), frozenAt + timings.renewDeadline().toNanos())
                      || !leader.revoked().isEmpty());
      waiting("until " + what + " has been frozen longer than the lease")
          .until(() -> System.nanoTime() - frozenAt > timings.leaseDuration().toNanos());
    } finally {
      // The server may answer again anywhere within thaw() (a container's unpause goes through the
      // Docker API), so the freeze is taken to end when the thaw begins.
      thawedAt = System.nanoTime();
      server.thaw();
    }
    Optional<Long> steppedDown =
        history.terms(election).stream()
            .filter(t -> t.token().equals(term.token()))
            .findFirst()
            .orElseThrow()
            .revokedNanos();
    if (leaderMustStepDown) {
      assertThat(steppedDown)
          .as("%s stepped down while %s was frozen", leader.name(), what)
          .isPresent();
      assertThat(steppedDown.get())
          .as("%s stepped down before the thaw", leader.name())
          .isLessThan(thawedAt);
      assertThat(
              history.terms(election).stream()
                  .filter(t -> t.electedNanos() - frozenAt > 0 && t.electedNanos() - thawedAt < 0))
          .as("terms that began while %s was frozen", what)
          .isEmpty();
    } else if (steppedDown.isEmpty()) {
      assertThat(history.terms(election))
          .as("terms while %s was frozen and %s kept its term", what, leader.name())
          .extracting(History.TermRecord::token)
          .containsExactly(term.token());
    }
    Candidate settled = awaitSoleCurrentLeader();
    Term now = settled.toldTerm().orElseThrow();
    if (steppedDown.isPresent()) {
      assertThat(now.token())
          .as("the token after the freeze")
          .matches(t -> t.isNewerThan(term.token()), "newer than " + term.token());
    }
    Figures figures =
        new Figures(
            term.token(),
            steppedDown.map(s -> (s - frozenAt) / 1_000_000),
            (thawedAt - frozenAt) / 1_000_000,
            now.token(),
            (System.nanoTime() - thawedAt) / 1_000_000);
    log.info(
        "{} frozen {} ms: {} with token {} {}; {} leads with token {} and all agree {} ms after the thaw",
        what,
        figures.frozenFor(),
        leader.name(),
        term.token(),
        steppedDown
            .map(s -> "stepped down " + (s - frozenAt) / 1_000_000 + " ms after the freeze")
            .orElse("kept its term"),
        settled.name(),
        now.token(),
        figures.allAgreeAfterThaw());
    return figures;
  }

  private boolean renewedAfter(Candidate leader, FencingToken token, long afterNanos) {
    return !history
        .calls(
            election,
            c ->
                c.kind() == History.Kind.RENEW
                    && c.outcome() == History.Outcome.OK
                    && c.candidate().equals(leader.name())
                    && token.equals(c.token())
                    && c.startNanos() - afterNanos > 0)
        .isEmpty();
  }

  private Candidate awaitSoleCurrentLeader() {
    Candidate leader =
        waiting("until exactly one elector leads and was told so")
            .until(
                () ->
                    candidates.stream()
                        .filter(c -> c.isLeader() && c.toldTerm().isPresent())
                        .toList(),
                l -> l.size() == 1)
            .get(0);
    waiting("until all agree that " + leader.name() + " leads")
        .until(
            () ->
                candidates.stream()
                    .allMatch(c -> c.currentLeader().equals(Optional.of(leader.name()))));
    return leader;
  }

  private ConditionFactory waiting(String what) {
    return Awaitility.await(what)
        .atMost(timings.leaseDuration().multipliedBy(4).plus(timings.allowance()).plusSeconds(20))
        .pollInterval(Duration.ofMillis(20));
  }

  /** Closes the electors, followers first, and checks the history. */
  @Override
  public void close() {
    candidates.stream().filter(c -> !c.isLeader()).forEach(c -> c.elector().close());
    candidates.forEach(c -> c.elector().close());
    history.check(election, timings.renewDeadline(), longestCall);
  }
}
