package dev.baton.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.History;
import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.ElectionListener;
import dev.baton.election.Elector;
import dev.baton.election.FencingToken;
import dev.baton.election.Term;
import dev.baton.testservers.EtcdCluster;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Three electors, each on its own jetcd client to all three members, while etcd members die and
 * come back: a follower member killed, the raft leader member killed, a member restarted. The
 * store-level versions are in {@link EtcdMemberFailureIT}.
 *
 * <p>Timings are long enough for etcd's leader change (renewals get through 1.7 to 3.5 s after the
 * raft leader dies; see docs/etcd.md) to fit inside the renew deadline, with a call timeout of a
 * third of it. Every test ends by closing the electors and checking the recorded history as the
 * conformance suite does: no two terms overlapped, tokens only grew, every call returned within the
 * renew deadline.
 */
class EtcdMemberFailureElectorIT {

  private static final Logger log = LoggerFactory.getLogger(EtcdMemberFailureElectorIT.class);
  private static final Duration LEASE = Duration.ofSeconds(8);
  private static final Duration RENEW_DEADLINE = Duration.ofSeconds(6);
  private static final Duration RETRY = Duration.ofSeconds(1);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration PATIENCE = LEASE.multipliedBy(3).plusSeconds(10);

  /**
   * For all to agree after a thaw: a follower whose watch died on the frozen member learns only at
   * its own next look, which followers take every 30 s at this lease (plus jitter).
   */
  private static final Duration AGREEMENT = PATIENCE.plusSeconds(40);

  private static final int NODES = 3;

  private static final String ETCD_VERSION =
      EtcdCluster.binary().map(EtcdMemberFailureElectorIT::version).orElse("unknown");

  /**
   * Whether this etcd predates the fix of etcd-io/etcd#15247 (3.4.28 and 3.5.11, by their
   * changelogs).
   */
  private static final boolean REVOKES_AFTER_A_STALL = predatesRevocationFix(ETCD_VERSION);

  private static EtcdCluster etcd;
  private static final List<Client> clients = new ArrayList<>();

  private final History history = new History();
  private final LeaderCount leaders = new LeaderCount();
  private final List<Node> nodes = new ArrayList<>();
  private String election;

  @BeforeAll
  static void startCluster() {
    EtcdCluster.requireBinary();
    etcd = EtcdCluster.start(3);
    for (int i = 0; i < NODES; i++) {
      // As the provider builds its client: with gRPC pings, so that a frozen member is given up.
      clients.add(
          Client.builder()
              .endpoints(etcd.endpoints())
              .keepaliveTime(EtcdLeaseStoreProvider.KEEPALIVE_TIME)
              .keepaliveTimeout(CALL_TIMEOUT)
              .keepaliveWithoutCalls(false)
              .build());
    }
  }

  @AfterAll
  static void stopCluster() {
    clients.forEach(Client::close);
    clients.clear();
    if (etcd != null) {
      etcd.close();
    }
  }

  @BeforeEach
  void startElectors(TestInfo test) {
    // Earlier tests kill members and may have moved the raft leader.
    etcd.restartAll();
    election = test.getTestMethod().orElseThrow().getName() + "-" + System.nanoTime();
    for (int i = 0; i < NODES; i++) {
      nodes.add(new Node("node-" + (i + 1), clients.get(i)));
    }
    nodes.forEach(n -> n.elector.start());
  }

  @AfterEach
  void closeElectorsAndCheckTheHistory() {
    // Followers first, so the leader's release is not taken up by a candidate about to close.
    nodes.stream().filter(n -> !n.elector.isLeader()).forEach(Node::close);
    nodes.stream().filter(n -> n.elector.isRunning()).forEach(Node::close);
    for (Node n : nodes) {
      assertThat(n.inPairs())
          .as("%s's callbacks come as onElected, onRevoked pairs: %s", n.name, n.events)
          .isTrue();
    }
    if (raftLeaderStalled && REVOKES_AFTER_A_STALL) {
      checkAllowingTheStaleLeadersRevocation();
      return;
    }
    assertThat(leaders.most())
        .as("electors told they lead at the same time")
        .isLessThanOrEqualTo(1);
    history.check(election, RENEW_DEADLINE);
  }

  /**
   * etcd before the fix of etcd-io/etcd#15247 (PR 16822; Debian bookworm ships 3.4.23): a raft
   * leader that stalls longer than a lease and resumes still believes it leads for a moment, and
   * revokes the leases it saw no keep-alive for, although the new raft leader kept them alive. The
   * key goes with the lease: a watching follower is granted at once, while the holder learns of the
   * loss only at its next renewal. No client can prevent that. What Baton still promises: the
   * holder ends its term by its next renewal (a retry period and a call later), and tokens grow.
   */
  private void checkAllowingTheStaleLeadersRevocation() {
    try {
      history.check(election, RENEW_DEADLINE);
      assertThat(leaders.most())
          .as("electors told they lead at the same time")
          .isLessThanOrEqualTo(1);
      return;
    } catch (AssertionError e) {
      if (!e.getMessage().startsWith("election '")) {
        throw e;
      }
      // The breach and what follows from it: the grant, the terms that overlapped until the old
      // holder's next renewal, and its work stopping after the grant (each with its calls below).
      List<String> others =
          e.getMessage()
              .lines()
              .skip(1)
              .filter(l -> l.startsWith("  ") && !l.startsWith("   "))
              .filter(
                  l ->
                      !(l.contains(" was granted token ")
                              && (l.contains(" ran until ") || l.contains(" was still stopping")))
                          && !l.startsWith("  terms overlapped: "))
              .toList();
      assertThat(others)
          .as("breaches other than a grant after the stale leader's revocation: %s", e.getMessage())
          .isEmpty();
      log.warn(
          "etcd {} revoked a live lease when the stalled raft leader resumed (etcd-io/etcd#15247): {}",
          ETCD_VERSION,
          e.getMessage());
    }
    List<History.TermRecord> terms = history.terms(election);
    Duration overlapBound = RETRY.plus(CALL_TIMEOUT).plusSeconds(1);
    for (int i = 1; i < terms.size(); i++) {
      History.TermRecord before = terms.get(i - 1);
      History.TermRecord after = terms.get(i);
      assertThat(after.token())
          .as("the token of the term after %s", before.token())
          .isGreaterThan(before.token());
      long overlap = before.revokedNanos().orElseThrow() - after.electedNanos();
      // Collected for docs/etcd.md: how long two leaders overlapped after the stale revocation.
      log.info(
          "two leaders after the stale revocation: {} (token {}) led on {} ms after {} was elected with token {}",
          before.candidate(),
          before.token(),
          String.format("%.1f", overlap / 1e6),
          after.candidate(),
          after.token());
      assertThat(overlap)
          .as(
              "how long %s (token %s) led on after %s was granted token %s, in ns",
              before.candidate(), before.token(), after.candidate(), after.token())
          .isLessThanOrEqualTo(overlapBound.toNanos());
    }
  }

  @Test
  void aFollowerMemberKilledCostsNoLeadership() {
    Node leader = awaitSoleLeader();
    Term term = leader.elected.get(0);
    etcd.kill(etcd.follower());
    long killedAt = System.nanoTime();

    awaitRenewalStartedAfter(leader, term.token(), killedAt + RENEW_DEADLINE.toNanos());

    assertThat(leader.elector.currentTerm()).map(Term::token).contains(term.token());
    assertNoOtherTermThan(leader, term);
  }

  @Test
  void theRaftLeaderMemberKilledKeepsTheTermOrStepsDownCleanlyAndLeadershipReturns() {
    Node leader = awaitSoleLeader();
    Term term = leader.elected.get(0);
    EtcdCluster.Member raftLeader = etcd.awaitLeader(Duration.ofSeconds(10));
    etcd.kill(raftLeader);
    long killedAt = System.nanoTime();

    awaitKeptOrNewTerm(leader, term, killedAt);

    if (leader.revoked.isEmpty()) {
      log.info(
          "raft leader {} killed: {} kept term {} (first renewal after the kill got through {} ms after it)",
          raftLeader,
          leader.name,
          term.token(),
          firstRenewalAfterMillis(leader, term.token(), killedAt));
      assertThat(leader.elector.currentTerm()).map(Term::token).contains(term.token());
      assertNoOtherTermThan(leader, term);
    } else {
      // It may have kept its term past the deadline and stepped down only later, so the next term
      // can still be on its way.
      History.TermRecord next =
          waiting("until a term after the fault began")
              .until(() -> newTermSince(killedAt), Optional::isPresent)
              .orElseThrow();
      long revokedAt =
          history.terms(election).stream()
              .filter(t -> t.token().equals(term.token()))
              .findFirst()
              .orElseThrow()
              .revokedNanos()
              .orElseThrow();
      log.info(
          "raft leader {} killed: {} stepped down {} ms after the kill; {} was elected with token {} {} ms after it",
          raftLeader,
          leader.name,
          (revokedAt - killedAt) / 1_000_000,
          next.candidate(),
          next.token(),
          (next.electedNanos() - killedAt) / 1_000_000);
      assertThat(leader.revoked).as("%s's revoked terms", leader.name).containsExactly(term);
      assertThat(next.token()).as("the new term's token").isGreaterThan(term.token());
      assertThat(revokedAt)
          .as("the old term ended before the new one began")
          .isLessThan(next.electedNanos());
      waiting("until everyone agrees who leads")
          .until(
              () ->
                  nodes.stream()
                      .allMatch(
                          n -> n.elector.currentLeader().equals(Optional.of(next.candidate()))));
    }
  }

  /*
   * A frozen member (SIGSTOP) is not a killed one: its sockets stay open, so a client whose gRPC
   * channel is on it does not fail over; its calls time out until the channel gives up. Measured:
   * a frozen follower can cost the leader its term (its keep-alive went to the frozen member), and
   * the handover is then clean. Both tests check what must hold either way: the leader steps down
   * by its renew deadline, nobody is granted early (the history check after each test), and after
   * SIGCONT one leader leads and all agree, with no elector restarted.
   */

  @Test
  void
      aFollowerMemberFrozenLongerThanTheLeaseKeepsTheTermOrHandsOverCleanlyAndLeadershipSettlesAfterTheThaw() {
    frozenLongerThanTheLease(etcd.follower(), "follower");
  }

  @Test
  void
      theRaftLeaderMemberFrozenLongerThanTheLeaseKeepsTheTermOrHandsOverCleanlyAndLeadershipSettlesAfterTheThaw() {
    awaitSoleLeader();
    raftLeaderStalled = true;
    frozenLongerThanTheLease(etcd.awaitLeader(Duration.ofSeconds(10)), "raft leader");
  }

  private boolean raftLeaderStalled;

  static boolean predatesRevocationFix(String version) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)").matcher(version);
    if (!m.find()) {
      return true;
    }
    int major = Integer.parseInt(m.group(1));
    int minor = Integer.parseInt(m.group(2));
    int patch = Integer.parseInt(m.group(3));
    if (major != 3) {
      return major < 3;
    }
    return minor < 4 || (minor == 4 && patch < 28) || (minor == 5 && patch < 11);
  }

  private static String version(java.nio.file.Path binary) {
    try {
      Process p =
          new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
      String out =
          new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      p.waitFor();
      return out.lines()
          .filter(l -> l.startsWith("etcd Version:"))
          .findFirst()
          .map(l -> l.substring("etcd Version:".length()).strip())
          .orElse("unknown");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot run " + binary + " --version", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted asking etcd for its version", e);
    }
  }

  private void frozenLongerThanTheLease(EtcdCluster.Member member, String role) {
    Node leader = awaitSoleLeader();
    Term term = leader.elected.get(0);
    etcd.freeze(member);
    long frozenAt = System.nanoTime();
    try {
      awaitKeptOrNewTerm(leader, term, frozenAt);
      // The freeze is the fault: it lasts longer than the lease, whatever happened meanwhile.
      waiting("until " + member + " has been frozen longer than the lease")
          .until(() -> System.nanoTime() - frozenAt > LEASE.toNanos());
    } finally {
      etcd.thaw(member);
    }
    long thawedAt = System.nanoTime();
    if (leader.revoked.isEmpty()) {
      log.info(
          "{} {} frozen for {} ms: {} kept term {} (first renewal after the freeze got through {} ms after it)",
          role,
          member,
          (thawedAt - frozenAt) / 1_000_000,
          leader.name,
          term.token(),
          firstRenewalAfterMillis(leader, term.token(), frozenAt));
      assertNoOtherTermThan(leader, term);
    } else {
      // It may have kept its term past the deadline and stepped down only later, so the next term
      // can still be on its way.
      History.TermRecord next =
          waiting("until a term after the fault began")
              .until(() -> newTermSince(frozenAt), Optional::isPresent)
              .orElseThrow();
      long revokedAt =
          history.terms(election).stream()
              .filter(t -> t.token().equals(term.token()))
              .findFirst()
              .orElseThrow()
              .revokedNanos()
              .orElseThrow();
      log.info(
          "{} {} frozen: {} stepped down {} ms after the freeze; {} was elected with token {} {} ms after it",
          role,
          member,
          leader.name,
          (revokedAt - frozenAt) / 1_000_000,
          next.candidate(),
          next.token(),
          (next.electedNanos() - frozenAt) / 1_000_000);
      assertThat(leader.revoked).as("%s's revoked terms", leader.name).containsExactly(term);
      assertThat(next.token()).as("the new term's token").isGreaterThan(term.token());
      assertThat(revokedAt)
          .as("the old term ended before the new one began")
          .isLessThan(next.electedNanos());
    }
    Node settled = awaitSoleCurrentLeader();
    log.info(
        "{} {} thawed: {} leads and all agree {} ms after the thaw",
        role,
        member,
        settled.name,
        (System.nanoTime() - thawedAt) / 1_000_000);
  }

  @Test
  void aRestartedMemberServesAgainAndLeadershipIsUnaffected() {
    Node leader = awaitSoleLeader();
    Term term = leader.elected.get(0);
    EtcdCluster.Member restarted = etcd.follower();
    etcd.kill(restarted);
    awaitRenewalStartedAfter(leader, term.token(), System.nanoTime());

    etcd.restart(restarted);
    // The other follower goes: quorum is now the raft leader and the restarted member, so the
    // renewals below prove the restarted member caught up and serves.
    EtcdCluster.Member other =
        etcd.members().stream()
            .filter(m -> m != restarted && m.isRunning() && !etcd.leader().equals(Optional.of(m)))
            .findFirst()
            .orElseThrow();
    etcd.kill(other);
    long killedAt = System.nanoTime();
    awaitRenewalStartedAfter(leader, term.token(), killedAt + RENEW_DEADLINE.toNanos());

    assertThat(leader.elector.currentTerm()).map(Term::token).contains(term.token());
    assertNoOtherTermThan(leader, term);
  }

  // ---------------------------------------------------------------- helpers

  /**
   * The one node that leads, once exactly one does and all agree on it. Judged afresh at every
   * look: the node that leads first need not be the one leadership settles on (on an etcd with
   * issue 15247 the thawed raft leader revokes a lease granted during the freeze, and another node
   * takes over).
   */
  private Node awaitSoleCurrentLeader() {
    Node leader;
    try {
      leader =
          waiting("until exactly one elector leads and all agree on it")
              .atMost(AGREEMENT)
              .until(this::agreedLeader, Optional::isPresent)
              .orElseThrow();
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          e.getMessage() + "; what each node believed and its last store calls:\n" + beliefs(), e);
    }
    return leader;
  }

  private Optional<Node> agreedLeader() {
    List<Node> leading = nodes.stream().filter(n -> n.elector.isLeader()).toList();
    if (leading.size() != 1) {
      return Optional.empty();
    }
    Node leader = leading.get(0);
    boolean agreed =
        nodes.stream().allMatch(n -> n.elector.currentLeader().equals(Optional.of(leader.name)));
    return agreed ? Optional.of(leader) : Optional.empty();
  }

  private String beliefs() {
    StringBuilder out = new StringBuilder();
    for (Node n : nodes) {
      out.append(n.name)
          .append(": leads ")
          .append(n.elector.isLeader())
          .append(", believes ")
          .append(n.elector.currentLeader())
          .append(", events ")
          .append(n.events);
      List<Call> calls = history.calls(election, c -> c.node().equals(n.name));
      for (Call c : calls.subList(Math.max(0, calls.size() - 6), calls.size())) {
        out.append("\n    ")
            .append(c.kind())
            .append(' ')
            .append(c.outcome())
            .append(" from ")
            .append(history.at(c.startNanos()))
            .append(" to ")
            .append(history.at(c.endNanos()));
      }
      out.append('\n');
    }
    return out.toString();
  }

  private Node awaitSoleLeader() {
    List<Node> found =
        waiting("until exactly one elector leads")
            .until(
                () -> nodes.stream().filter(n -> !n.elected.isEmpty()).toList(),
                l -> l.size() == 1);
    Node leader = found.get(0);
    waiting("until all agree that " + leader.name + " leads")
        .until(
            () ->
                nodes.stream()
                    .allMatch(n -> n.elector.currentLeader().equals(Optional.of(leader.name))));
    return leader;
  }

  /**
   * Either the leader renewed its term a whole renew deadline after the fault (it kept it), or it
   * stepped down and somebody was elected afresh. Both are correct; two leaders never are.
   */
  private void awaitKeptOrNewTerm(Node leader, Term term, long faultAt) {
    waiting(
            "until "
                + leader.name
                + " kept term "
                + term.token()
                + " past its renew deadline, or a new term began")
        .until(
            () ->
                renewedAfter(leader, term.token(), faultAt + RENEW_DEADLINE.toNanos())
                    || newTermSince(faultAt).isPresent());
  }

  /** Waits for a successful renewal of {@code token} that started after {@code afterNanos}. */
  private void awaitRenewalStartedAfter(Node leader, FencingToken token, long afterNanos) {
    waiting("until " + leader.name + " renews term " + token + " after " + history.at(afterNanos))
        .until(() -> renewedAfter(leader, token, afterNanos) || !leader.revoked.isEmpty());
    assertThat(leader.revoked).as("terms %s lost", leader.name).isEmpty();
  }

  private boolean renewedAfter(Node leader, FencingToken token, long afterNanos) {
    return !history
        .calls(election, c -> isRenewalOf(c, leader, token) && c.startNanos() - afterNanos > 0)
        .isEmpty();
  }

  private long firstRenewalAfterMillis(Node leader, FencingToken token, long afterNanos) {
    return history
        .calls(election, c -> isRenewalOf(c, leader, token) && c.startNanos() - afterNanos > 0)
        .stream()
        .mapToLong(c -> (c.endNanos() - afterNanos) / 1_000_000)
        .min()
        .orElseThrow();
  }

  private static boolean isRenewalOf(Call c, Node leader, FencingToken token) {
    return c.kind() == Kind.RENEW
        && c.outcome() == Outcome.OK
        && c.candidate().equals(leader.name)
        && c.token().equals(token);
  }

  private Optional<History.TermRecord> newTermSince(long sinceNanos) {
    return history.terms(election).stream()
        .filter(t -> t.electedNanos() - sinceNanos > 0)
        .findFirst();
  }

  private void assertNoOtherTermThan(Node leader, Term term) {
    assertThat(leader.elected).as("%s's terms", leader.name).containsExactly(term);
    assertThat(leader.revoked).as("%s's revoked terms", leader.name).isEmpty();
    assertThat(nodes)
        .filteredOn(n -> n != leader)
        .allSatisfy(n -> assertThat(n.events).as("%s's callbacks", n.name).isEmpty());
    assertThat(history.terms(election))
        .extracting(History.TermRecord::token)
        .containsExactly(term.token());
  }

  private static ConditionFactory waiting(String what) {
    return Awaitility.await(what).atMost(PATIENCE).pollInterval(Duration.ofMillis(20));
  }

  /** One elector on its own client and store, and what it was told. */
  private final class Node implements ElectionListener {
    final String name;
    final EtcdLeaseStore store;
    final Elector elector;
    final List<Term> elected = new CopyOnWriteArrayList<>();
    final List<Term> revoked = new CopyOnWriteArrayList<>();
    final List<String> events = new CopyOnWriteArrayList<>();

    Node(String name, Client client) {
      this.name = name;
      this.store = EtcdLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
      this.elector =
          Elector.builder(history.recording(name, store))
              .election(election)
              .candidate(name)
              .leaseDuration(LEASE)
              .renewDeadline(RENEW_DEADLINE)
              .retryPeriod(RETRY)
              .listener(this)
              .build();
    }

    @Override
    public void onElected(Term term) {
      history.recordElected(term.election(), name, term.token());
      leaders.add(1);
      elected.add(term);
      events.add("elected " + term.token());
    }

    @Override
    public void onRevoked(Term term) {
      leaders.add(-1);
      history.recordRevoked(term.election(), name, term.token());
      revoked.add(term);
      events.add("revoked " + term.token());
    }

    boolean inPairs() {
      for (int i = 0; i < events.size(); i++) {
        if (!events.get(i).startsWith(i % 2 == 0 ? "elected" : "revoked")) {
          return false;
        }
      }
      return true;
    }

    void close() {
      elector.close();
      store.close();
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** How many electors of this test believe they lead, and the most there ever were at once. */
  private static final class LeaderCount {
    private final AtomicInteger now = new AtomicInteger();
    private final AtomicInteger most = new AtomicInteger();

    void add(int delta) {
      most.accumulateAndGet(now.addAndGet(delta), Math::max);
    }

    int most() {
      return most.get();
    }
  }
}
