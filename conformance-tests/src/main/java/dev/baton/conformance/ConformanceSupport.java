package dev.baton.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Elector;
import dev.baton.election.ElectorBuilder;
import dev.baton.election.LeaseStore;
import dev.baton.election.Term;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every scenario stands on: the fixture (started once per class), the simulated nodes, the
 * history, and cleanup. After every scenario it heals every fault, closes every elector the
 * scenario built, and checks the history of every election the scenario used, so each scenario also
 * proves that leadership never overlapped and tokens only grew.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.DisplayName.class)
abstract class ConformanceSupport {

  static final Logger log = LoggerFactory.getLogger("dev.baton.conformance");

  /** The backend's fixture. Called once per test class, before any scenario. */
  protected abstract ConformanceFixture fixture();

  ConformanceFixture fixture;
  Timings timings;
  History history;
  ScheduledExecutorService ticker;
  private final Map<String, Node> nodes = new LinkedHashMap<>();
  private final List<Candidate> candidates = new CopyOnWriteArrayList<>();
  private final Map<String, Duration> elections = new LinkedHashMap<>();
  private final Deque<AutoCloseable> cleanups = new ArrayDeque<>();
  private volatile boolean userCodeThrows;

  @BeforeAll
  final void startFixture() throws Exception {
    fixture = fixture();
    if (fixture == null) {
      throw new IllegalStateException(getClass().getName() + ".fixture() returned null");
    }
    timings = fixture.timings();
    history = new History();
    ScheduledThreadPoolExecutor t =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread thread = new Thread(r, "conformance-ticker");
              thread.setDaemon(true);
              return thread;
            });
    t.setRemoveOnCancelPolicy(true);
    ticker = t;
    fixture.start();
  }

  @AfterEach
  final void endScenario() {
    List<Throwable> failures = new ArrayList<>();
    attempt(failures, fixture::restore);
    for (Node n : nodes()) {
      attempt(failures, n::resumeAndHeal);
    }
    // Followers first, so a leader's release is not taken up by a candidate about to close.
    List<Candidate> order = new ArrayList<>(candidates);
    order.sort((a, b) -> Boolean.compare(a.elector().isLeader(), b.elector().isLeader()));
    for (Candidate c : order) {
      attempt(failures, () -> c.elector().close());
    }
    synchronized (cleanups) {
      while (!cleanups.isEmpty()) {
        attempt(failures, cleanups.pop()::close);
      }
    }
    synchronized (elections) {
      elections.forEach((e, deadline) -> attempt(failures, () -> history.check(e, deadline)));
      elections.clear();
    }
    candidates.clear();
    userCodeThrows = false;
    if (!failures.isEmpty()) {
      Throwable first = failures.get(0);
      failures.subList(1, failures.size()).forEach(first::addSuppressed);
      if (first instanceof Error) {
        throw (Error) first;
      }
      throw new AssertionError("cleaning up after the scenario failed", first);
    }
  }

  @AfterAll
  final void closeFixture() throws Exception {
    try {
      nodes().forEach(Node::close);
      if (ticker != null) {
        ticker.shutdownNow();
      }
    } finally {
      if (fixture != null) {
        fixture.close();
      }
    }
  }

  private interface Step {
    void run() throws Exception;
  }

  private static void attempt(List<Throwable> failures, Step step) {
    try {
      step.run();
    } catch (Exception | AssertionError e) {
      failures.add(e);
    }
  }

  // ---------------------------------------------------------------- nodes and elections

  /** The node called {@code name}, connected on first use and kept for the whole class. */
  final Node node(String name) {
    synchronized (nodes) {
      Node n = nodes.get(name);
      if (n == null) {
        try {
          n = new Node(name, fixture.connect(name), history);
        } catch (Exception e) {
          throw new IllegalStateException("the fixture could not connect node " + name, e);
        }
        nodes.put(name, n);
      }
      return n;
    }
  }

  /** Nodes {@code node-1} to {@code node-<count>}. */
  final List<Node> nodes(int count) {
    List<Node> list = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      list.add(node("node-" + i));
    }
    return list;
  }

  private List<Node> nodes() {
    synchronized (nodes) {
      return List.copyOf(nodes.values());
    }
  }

  /** A fresh election name for this scenario (short, lower case: every backend can store it). */
  final String newElection(String scenario) {
    String name = scenario + "-" + UUID.randomUUID().toString().substring(0, 8);
    synchronized (elections) {
      elections.put(name, timings.renewDeadline());
    }
    return name;
  }

  /** An elector for {@code node} in {@code election} with the fixture's timings; not started. */
  final Candidate candidate(Node node, String election) {
    return candidate(node, election, timings, b -> {});
  }

  /**
   * An elector built with {@code timings}; {@code customize} may add work, executors or a
   * scheduler. The suite's own listener comes last, so it records a revocation after the work
   * stopped.
   */
  final Candidate candidate(
      Node node, String election, Timings timings, Consumer<ElectorBuilder> customize) {
    return candidate(node, node.store(), election, timings, customize);
  }

  /**
   * {@link #candidate(Node, String, Timings, Consumer)} on {@code store}, which wraps the node's
   * recorded store.
   */
  final Candidate candidate(
      Node node,
      LeaseStore store,
      String election,
      Timings timings,
      Consumer<ElectorBuilder> customize) {
    return candidate(node, node.name(), store, election, timings, customize);
  }

  /** An elector for {@code node} under the candidate id {@code id}; not started. */
  final Candidate candidate(Node node, String id, String election) {
    return candidate(node, id, node.store(), election, timings, b -> {});
  }

  private Candidate candidate(
      Node node,
      String id,
      LeaseStore store,
      String election,
      Timings timings,
      Consumer<ElectorBuilder> customize) {
    synchronized (elections) {
      elections.merge(election, timings.renewDeadline(), (a, b) -> a.compareTo(b) >= 0 ? a : b);
    }
    Candidate c = new Candidate(node, id, election, history);
    ElectorBuilder b =
        Elector.builder(store)
            .election(election)
            .candidate(id)
            .leaseDuration(timings.leaseDuration())
            .renewDeadline(timings.renewDeadline())
            .retryPeriod(timings.retryPeriod());
    customize.accept(b);
    c.attach(b.listener(c).build());
    candidates.add(c);
    return c;
  }

  /** Stops tracking a closed elector (churn builds hundreds). */
  final void forget(Candidate c) {
    candidates.remove(c);
  }

  /** Builds and starts an elector on each node, all at once. */
  final List<Candidate> startAll(List<Node> on, String election) {
    List<Candidate> list = on.stream().map(n -> candidate(n, election)).toList();
    list.forEach(c -> c.elector().start());
    return list;
  }

  /** Starts {@code c} and waits until it leads and was told so (it must be alone or first). */
  final Candidate startAndAwaitLeading(Candidate c) {
    c.elector().start();
    waiting("until " + c.name() + " leads " + c.election()).until(() -> c.toldTerm().isPresent());
    return c;
  }

  // ---------------------------------------------------------------- waiting

  /** Awaitility with the fixture's patience; a scenario names what it waits for. */
  final ConditionFactory waiting(String what) {
    return waiting(what, timings.patience());
  }

  final ConditionFactory waiting(String what, Duration atMost) {
    ConditionFactory wait =
        Awaitility.await(what)
            .atMost(atMost)
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(10));
    return userCodeThrows ? wait.dontCatchUncaughtExceptions() : wait;
  }

  /**
   * This scenario's user code throws on the elector's threads on purpose: what escapes the elector
   * (a pool thread's uncaught Error) is not a failure by itself; what the scenario checks decides.
   */
  final void userCodeThrows() {
    userCodeThrows = true;
  }

  /** Waits until exactly one of {@code among} leads (and was told so) and returns it. */
  final Candidate awaitSoleLeader(Collection<Candidate> among) {
    List<Candidate> leaders =
        waiting("until exactly one of " + among + " leads")
            .until(
                () -> among.stream().filter(c -> c.toldTerm().isPresent()).toList(),
                l -> l.size() == 1);
    return leaders.get(0);
  }

  /**
   * Waits until one of {@code among} leads (and was told so) in a term granted by a call that
   * returned after {@code sinceNanos} (it may have been sent before, and waited), and returns that
   * term.
   */
  final Term awaitNewTerm(Collection<Candidate> among, long sinceNanos) {
    return waiting("until one of " + among + " is elected after " + history.at(sinceNanos))
        .until(
            () ->
                among.stream()
                    .map(Candidate::toldTerm)
                    .flatMap(Optional::stream)
                    .filter(
                        t ->
                            history.grants(t.election()).stream()
                                .anyMatch(
                                    g ->
                                        g.token().equals(t.token())
                                            && g.endNanos() - sinceNanos > 0))
                    .findFirst(),
            Optional::isPresent)
        .orElseThrow();
  }

  /** {@link #awaitNewTerm}, answering who leads. */
  final Candidate awaitNewLeader(Collection<Candidate> among, long sinceNanos) {
    Term term = awaitNewTerm(among, sinceNanos);
    return among.stream().filter(c -> c.name().equals(term.candidate())).findFirst().orElseThrow();
  }

  /**
   * Waits until exactly one of {@code among} leads and every one of them names it, and returns it.
   * The leader is looked up again each time: if the first leader steps down before all agree (a
   * renewal that missed its deadline on a busy machine), the wait goes on with the next one.
   */
  final Candidate awaitAgreedSoleLeader(Collection<Candidate> among) {
    return waiting("until exactly one of " + among + " leads and all of them name it")
        .until(
            () -> {
              List<Candidate> leaders =
                  among.stream().filter(c -> c.toldTerm().isPresent()).toList();
              if (leaders.size() != 1) {
                return null;
              }
              Optional<String> leader = Optional.of(leaders.get(0).name());
              return among.stream().allMatch(c -> c.currentLeader().equals(leader))
                  ? leaders.get(0)
                  : null;
            },
            Objects::nonNull);
  }

  /** Everyone in {@code among} names {@code leader} as the leader. */
  final void awaitAgreement(Collection<Candidate> among, Candidate leader) {
    waiting("until all of " + among + " agree that " + leader.name() + " leads")
        .untilAsserted(
            () -> {
              Map<String, Optional<String>> views =
                  among.stream()
                      .collect(Collectors.toMap(Candidate::name, Candidate::currentLeader));
              assertThat(views)
                  .allSatisfy(
                      (name, view) ->
                          assertThat(view)
                              .as("%s's view of the leader", name)
                              .contains(leader.name()));
            });
  }

  /**
   * Waits until {@code count} renewals of {@code election} that {@code which} accepts started after
   * {@code sinceNanos}.
   */
  final void awaitRenewals(
      String what, String election, int count, long sinceNanos, Predicate<History.Call> which) {
    waiting(what)
        .until(
            () ->
                history
                        .calls(
                            election,
                            c ->
                                c.kind() == History.Kind.RENEW
                                    && c.startNanos() - sinceNanos > 0
                                    && which.test(c))
                        .size()
                    >= count);
  }

  /** The first grant of {@code election} whose call returned after {@code sinceNanos}. */
  final History.Call firstGrantAfter(String election, long sinceNanos) {
    return history.grants(election).stream()
        .filter(g -> g.endNanos() - sinceNanos > 0)
        .min(java.util.Comparator.comparingLong(History.Call::endNanos))
        .orElseThrow();
  }

  // ---------------------------------------------------------------- helpers that need cleanup

  /** Closed after the scenario, before the history is checked. */
  final <T extends AutoCloseable> T cleanup(T resource) {
    synchronized (cleanups) {
      cleanups.push(resource);
    }
    return resource;
  }

  /**
   * A scheduler whose timers never fire within a scenario: an elector on it can only act on what it
   * does at once (its first attempt on start, watch events), never on a tick.
   */
  final ScheduledExecutorService frozenScheduler() {
    ScheduledThreadPoolExecutor frozen =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "conformance-frozen-timer");
              t.setDaemon(true);
              return t;
            }) {
          @Override
          public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            return super.schedule(command, 1, TimeUnit.DAYS);
          }
        };
    cleanup(frozen::shutdownNow);
    return frozen;
  }

  /** Work that writes to {@code register} every tenth of a retry period while its term is valid. */
  final LeaderWork leaderWork(Node node, FencedRegister register, Executor executor) {
    return new LeaderWork(
        node.name(), register, ticker, executor, timings.retryPeriod().dividedBy(10), history);
  }

  /**
   * Runs {@code body} on a daemon thread; it loops while the supplier it is given says so, which
   * turns false when the scenario stops it or ends. What it throws fails the scenario.
   */
  final Background background(String name, Consumer<BooleanSupplier> body) {
    return cleanup(new Background("conformance-" + name, body, timings.patience()));
  }

  /** A loop on its own thread, stopped and joined on {@link #close()}. */
  static final class Background implements AutoCloseable {
    private final Thread thread;
    private final Duration joinWithin;
    private volatile boolean running = true;
    private volatile Throwable failure;

    Background(String name, Consumer<BooleanSupplier> body, Duration joinWithin) {
      this.joinWithin = joinWithin;
      this.thread =
          new Thread(
              () -> {
                try {
                  body.accept(() -> running);
                } catch (Throwable t) {
                  failure = t;
                }
              },
              name);
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void close() {
      running = false;
      try {
        thread.join(joinWithin.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while stopping " + thread.getName(), e);
      }
      if (thread.isAlive()) {
        throw new AssertionError(thread.getName() + " did not stop within " + joinWithin);
      }
      Throwable f = failure;
      failure = null;
      if (f != null) {
        throw new AssertionError(thread.getName() + " failed", f);
      }
    }
  }

  final String at(long nanos) {
    return history.at(nanos);
  }
}
