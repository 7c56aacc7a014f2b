package dev.baton.zookeeper;

import static dev.baton.zookeeper.ZooKeeperServers.uniqueElection;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.conformance.CloseAtEnd;
import dev.baton.conformance.History;
import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.ElectionListener;
import dev.baton.election.Elector;
import dev.baton.election.Term;
import dev.baton.testservers.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Three electors on a three-member ensemble while a member dies: what a leader sees of it. Each
 * test kills a member, so each gets a fresh ensemble. Every store call and term is recorded in a
 * conformance {@link History} and checked at the end: never two leaders, tokens only grew.
 */
class ZooKeeperMemberFailureIT {

  private static final Logger log = LoggerFactory.getLogger(ZooKeeperMemberFailureIT.class);
  private static final int TICK_MILLIS = 500;

  /** The session timeout, and so the lease; within the members' bounds of 0.5 to 10 s. */
  private static final Duration LEASE = Duration.ofSeconds(6);

  /** Room for the client to find another member (it waits up to a second before it tries one). */
  private static final Duration RENEW_DEADLINE = Duration.ofSeconds(4);

  private static final Duration RETRY = Duration.ofMillis(500);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration PATIENCE = Duration.ofSeconds(30);

  private final History history = new History();
  private final List<Participant> participants = new ArrayList<>();
  private final CloseAtEnd opened = new CloseAtEnd();
  private ZooKeeperEnsemble ensemble;
  private String election;

  @BeforeEach
  void startEnsemble() {
    ensemble = ZooKeeperEnsemble.start(TICK_MILLIS);
    election = uniqueElection("member-failure");
  }

  @AfterEach
  void closeEverything() throws Exception {
    closeElectors();
    opened.close();
    ensemble.close();
  }

  @Test
  void killingAMemberTheLeaderIsNotConnectedToCostsNoLeadership() throws Exception {
    startThree();
    Participant leader = awaitSoleLeader();
    Term term = leader.elected.get(0);
    long session = leader.sessionId();
    InstanceSpec connected = leader.connectedMember();
    // A follower member: killing the quorum leader would make every member drop its clients.
    InstanceSpec bystander =
        ensemble.cluster().getInstances().stream()
            .filter(m -> !m.equals(connected) && "follower".equals(ZooKeeperEnsemble.mode(m)))
            .findFirst()
            .orElseThrow(
                () ->
                    new AssertionError(
                        "no follower member other than "
                            + connected.getPort()
                            + ": "
                            + ensemble.modes()));

    long killedAt = System.nanoTime();
    ensemble.kill(bystander);

    await("until the leader renewed three times after the kill")
        .atMost(PATIENCE)
        .until(() -> renewalsAfter(leader, term, killedAt).size() >= 3);
    assertThat(leader.revoked).as("terms %s lost", leader.name).isEmpty();
    assertThat(leader.elector.currentTerm().map(Term::token)).contains(term.token());
    assertThat(leader.sessionId()).isEqualTo(session);
    assertThat(leader.connectedMember()).isEqualTo(connected);
    awaitAgreement(leader);
    assertThat(history.grants(election))
        .as("grants")
        .extracting(Call::token)
        .containsExactly(term.token());
    closeAndCheckHistory();
  }

  @Test
  void killingTheMemberTheLeaderIsConnectedToMovesItsSessionAndNeverGivesTwoLeaders()
      throws Exception {
    startThree();
    Participant leader = awaitSoleLeader();
    Term term = leader.elected.get(0);
    long session = leader.sessionId();
    InstanceSpec connected = leader.connectedMember();
    String role = ZooKeeperEnsemble.mode(connected);

    long killedAt = System.nanoTime();
    ensemble.kill(connected);

    // Either the session moves to another member in time and a renewal of the same term gets
    // through, or the leader steps down at its deadline and somebody is elected afresh.
    await(
            "until the leader renews its term through another member, or steps down and a new term begins")
        .atMost(PATIENCE)
        .until(
            () ->
                !renewalsAfter(leader, term, killedAt).isEmpty()
                    || (!leader.revoked.isEmpty() && newTermAfter(term).isPresent()));
    if (leader.revoked.isEmpty()) {
      Call renewal = renewalsAfter(leader, term, killedAt).get(0);
      log.info(
          "killed the {} member the leader was connected to: {} kept its term {}, first renewal through another member {} ms after the kill",
          role,
          leader.name,
          term.token(),
          (renewal.endNanos() - killedAt) / 1_000_000);
      assertThat(leader.elector.currentTerm().map(Term::token)).contains(term.token());
      assertThat(leader.sessionId()).as("the leader's session").isEqualTo(session);
      assertThat(leader.connectedMember())
          .as("the member the leader is connected to")
          .isNotEqualTo(connected);
      assertThat(history.grants(election))
          .as("grants")
          .extracting(Call::token)
          .containsExactly(term.token());
      awaitAgreement(leader);
    } else {
      Term next = newTermAfter(term).orElseThrow();
      log.info(
          "killed the {} member the leader was connected to: {} stepped down from term {}; {} leads with term {}",
          role,
          leader.name,
          term.token(),
          next.candidate(),
          next.token());
      assertThat(leader.revoked).as("terms %s lost", leader.name).containsExactly(term);
      assertThat(next.token()).isGreaterThan(term.token());
      awaitAgreement(
          participants.stream()
              .filter(p -> p.name.equals(next.candidate()))
              .findFirst()
              .orElseThrow());
    }
    closeAndCheckHistory();
  }

  // ---------------------------------------------------------------- helpers

  private void startThree() {
    for (String name : List.of("zk-a", "zk-b", "zk-c")) {
      CuratorFramework client =
          CuratorFrameworkFactory.builder()
              .connectString(ensemble.connectString())
              .sessionTimeoutMs((int) LEASE.toMillis())
              .connectionTimeoutMs((int) LEASE.toMillis())
              .retryPolicy(new RetryOneTime(100))
              .build();
      client.start();
      opened.add(client);
      ZooKeeperLeaseStore store =
          ZooKeeperLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
      opened.add(store);
      Participant p = new Participant(name, client);
      p.elector =
          Elector.builder(history.recording(name, store))
              .election(election)
              .candidate(name)
              .leaseDuration(LEASE)
              .renewDeadline(RENEW_DEADLINE)
              .retryPeriod(RETRY)
              .listener(p)
              .build();
      participants.add(p);
    }
    participants.forEach(p -> p.elector.start());
  }

  private Participant awaitSoleLeader() {
    List<Participant> leaders =
        await("until exactly one of three leads")
            .atMost(PATIENCE)
            .until(
                () -> participants.stream().filter(p -> !p.elected.isEmpty()).toList(),
                l -> l.size() == 1);
    Participant leader = leaders.get(0);
    awaitAgreement(leader);
    return leader;
  }

  private void awaitAgreement(Participant leader) {
    await("until all three agree that " + leader.name + " leads")
        .atMost(PATIENCE)
        .untilAsserted(
            () ->
                assertThat(participants)
                    .allSatisfy(
                        p ->
                            assertThat(p.elector.currentLeader())
                                .as("%s's view", p.name)
                                .contains(leader.name)));
  }

  /**
   * Successful renewals of {@code term} by {@code p} that started after {@code sinceNanos}, in
   * order.
   */
  private List<Call> renewalsAfter(Participant p, Term term, long sinceNanos) {
    return history
        .calls(
            election,
            c ->
                c.kind() == Kind.RENEW
                    && c.outcome() == Outcome.OK
                    && c.candidate().equals(p.name)
                    && c.token().equals(term.token())
                    && c.startNanos() - sinceNanos > 0)
        .stream()
        .sorted(Comparator.comparingLong(Call::startNanos))
        .toList();
  }

  /** A term some participant leads now, other than {@code old}. */
  private Optional<Term> newTermAfter(Term old) {
    return participants.stream()
        .map(p -> p.elector.currentTerm())
        .flatMap(Optional::stream)
        .filter(t -> !t.token().equals(old.token()))
        .findFirst();
  }

  /**
   * Followers first, so that the leader's release is not taken up by a candidate about to close.
   */
  private void closeElectors() {
    participants.stream()
        .sorted(Comparator.comparing((Participant p) -> p.elector.isLeader()))
        .forEach(p -> p.elector.close());
  }

  private void closeAndCheckHistory() {
    closeElectors();
    history.check(election, RENEW_DEADLINE);
    assertThat(history.terms(election))
        .as("terms")
        .allSatisfy(
            t ->
                assertThat(t.revokedNanos())
                    .as("%s's term %s ended", t.candidate(), t.token())
                    .isPresent());
  }

  /** One elector with its own client (and so its own session), and the terms it was told of. */
  private final class Participant implements ElectionListener {
    final String name;
    final CuratorFramework client;
    final List<Term> elected = new CopyOnWriteArrayList<>();
    final List<Term> revoked = new CopyOnWriteArrayList<>();
    Elector elector;

    Participant(String name, CuratorFramework client) {
      this.name = name;
      this.client = client;
    }

    @Override
    public void onElected(Term term) {
      elected.add(term);
      history.recordElected(election, name, term.token());
    }

    @Override
    public void onRevoked(Term term) {
      history.recordRevoked(election, name, term.token());
      revoked.add(term);
    }

    long sessionId() throws Exception {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    InstanceSpec connectedMember() throws Exception {
      return ensemble.cluster().findConnectionInstance(client.getZookeeperClient().getZooKeeper());
    }
  }
}
