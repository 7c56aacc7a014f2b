package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/** Builds an {@link Elector}; validates everything in {@link #build()}. */
public final class ElectorBuilder {
  final LeaseStore store;
  String election;
  String candidate;
  Duration leaseDuration = Duration.ofSeconds(15);
  Duration renewDeadline = Duration.ofSeconds(10);
  Duration retryPeriod = Duration.ofSeconds(2);
  MonotonicClock clock = MonotonicClock.system();
  ScheduledExecutorService scheduler;
  Executor worker;
  Executor ownPool;
  final List<ElectionListener> listeners = new ArrayList<>();
  final List<ElectorObserver> observers = new ArrayList<>();
  boolean closeOnShutdown = true;
  // The timings set explicitly, so that a message about one the user never set can say it is a
  // default.
  private final Set<String> timingsSet = new HashSet<>();

  ElectorBuilder(LeaseStore store) {
    this.store = requireNonNull(store, "store");
  }

  /** The election to campaign for. Required. */
  public ElectorBuilder election(String election) {
    this.election = requireNonNull(election, "election");
    return this;
  }

  /**
   * This candidate's identity. It must never be used by two live electors of the same election at
   * once, in any process: a store grants a live lease again to its holder's id, so two electors
   * sharing an id would both lead. Default: host name, process id and a random suffix, unique to
   * this elector.
   */
  public ElectorBuilder candidate(String candidate) {
    this.candidate = requireNonNull(candidate, "candidate");
    return this;
  }

  /** How long a lease lasts without renewal: the longest failover after a crash. Default 15 s. */
  public ElectorBuilder leaseDuration(Duration leaseDuration) {
    this.leaseDuration = requireNonNull(leaseDuration, "leaseDuration");
    timingsSet.add(ElectionProperties.LEASE_DURATION);
    return this;
  }

  /** How long a leader goes on without a confirmed renewal before it steps down. Default 10 s. */
  public ElectorBuilder renewDeadline(Duration renewDeadline) {
    this.renewDeadline = requireNonNull(renewDeadline, "renewDeadline");
    timingsSet.add(ElectionProperties.RENEW_DEADLINE);
    return this;
  }

  /** How often a leader renews and a polling follower tries. Default 2 s. */
  public ElectorBuilder retryPeriod(Duration retryPeriod) {
    this.retryPeriod = requireNonNull(retryPeriod, "retryPeriod");
    timingsSet.add(ElectionProperties.RETRY_PERIOD);
    return this;
  }

  /**
   * Reads {@code election.name}, {@code election.candidate-id} and the three durations; values set
   * on the builder before or after this call win in the order of the calls. Refuses, as likely
   * typos, {@code election.*} keys that neither the core nor a backend on the classpath reads, and
   * keys with a misspelt prefix ({@code electon.name}).
   */
  public ElectorBuilder configure(ElectionProperties properties) {
    requireNonNull(properties, "properties");
    properties.checkKeys();
    properties.get(ElectionProperties.NAME).ifPresent(this::election);
    properties.get(ElectionProperties.CANDIDATE_ID).ifPresent(this::candidate);
    properties.duration(ElectionProperties.LEASE_DURATION).ifPresent(this::leaseDuration);
    properties.duration(ElectionProperties.RENEW_DEADLINE).ifPresent(this::renewDeadline);
    properties.duration(ElectionProperties.RETRY_PERIOD).ifPresent(this::retryPeriod);
    return this;
  }

  public ElectorBuilder listener(ElectionListener listener) {
    listeners.add(requireNonNull(listener, "listener"));
    return this;
  }

  /**
   * Runs {@code work} for every term this node leads: started with the term, stopped (the returned
   * {@link AutoCloseable} closed) when it ends, started again with the next term.
   */
  public ElectorBuilder whileLeader(TermWork work) {
    requireNonNull(work, "work");
    listeners.add(new TermScopedWork(work));
    return this;
  }

  /** Told what the elector does, for metrics (a Micrometer binder, say). */
  public ElectorBuilder observer(ElectorObserver observer) {
    observers.add(requireNonNull(observer, "observer"));
    return this;
  }

  /** The timer all electors share by default is one daemon thread; supply another here. */
  public ElectorBuilder scheduler(ScheduledExecutorService scheduler) {
    this.scheduler = requireNonNull(scheduler, "scheduler");
    return this;
  }

  /**
   * Where the listener callbacks run: {@code onElected}, {@code onRevoked}, {@code
   * onLeaderChanged}, the {@link TermWork} start and stop, and a {@link Term}'s {@code onEnd}
   * actions and {@code ended()} dependents, one at a time and in order for each elector. Default:
   * the pool all electors share.
   *
   * <p>Only callbacks run here. The elector's own steps (the renew-deadline step-down among them)
   * and its blocking store calls run on Baton's own elastic pool, whose threads exist only while
   * there is work, and its timers on the {@link #scheduler}: so a pool that queues ({@code
   * Executors.newFixedThreadPool(2)}, {@code ForkJoinPool.commonPool()}, a Spring {@code
   * TaskExecutor}) never makes a step-down or a stop wait behind a store call that hangs. When this
   * executor refuses a callback (a bounded queue that is full, a pool shut down), the callbacks run
   * on Baton's pool instead, so a term's work is still stopped by its renew deadline.
   */
  public ElectorBuilder executor(Executor executor) {
    this.worker = requireNonNull(executor, "executor");
    return this;
  }

  /**
   * Where the elector's own steps and its store calls run, for tests that run everything on one
   * thread; Baton's shared pool otherwise.
   */
  ElectorBuilder ownPool(Executor pool) {
    this.ownPool = requireNonNull(pool, "pool");
    return this;
  }

  /**
   * Whether the JVM's shutdown (SIGTERM, Ctrl-C, {@code System.exit}) closes this elector once
   * started, so its lease is released and another replica takes over at once. Default true: a
   * stopped replica should hand over in milliseconds, not after its lease runs out. Turn it off
   * where something else closes the elector in its own shutdown order (a Spring context, say), so
   * the leader's work stops while what it uses is still open.
   */
  public ElectorBuilder closeOnShutdown(boolean closeOnShutdown) {
    this.closeOnShutdown = closeOnShutdown;
    return this;
  }

  /** The monotonic clock for deadlines. Default: {@link System#nanoTime()}. */
  public ElectorBuilder clock(MonotonicClock clock) {
    this.clock = requireNonNull(clock, "clock");
    return this;
  }

  public Elector build() {
    if (election == null || election.isBlank()) {
      throw new ConfigurationException(
          ElectionProperties.NAME
              + " (election) must not be blank, but was "
              + (election == null ? "not set" : "'" + election + "'"));
    }
    if (candidate == null) {
      candidate = defaultCandidate();
    }
    if (candidate.isBlank()) {
      throw new ConfigurationException(
          ElectionProperties.CANDIDATE_ID
              + " (candidate) must not be blank, but was '"
              + candidate
              + "'");
    }
    TimingRules.check(leaseDuration, renewDeadline, retryPeriod, Elector.JITTER, timingsSet);
    store.checkElectionName(election);
    store.checkLeaseDuration(leaseDuration);
    if (scheduler == null) {
      scheduler = SharedExecutors.scheduler();
    }
    if (ownPool == null) {
      ownPool = SharedExecutors.worker();
    }
    if (worker == null) {
      worker = ownPool;
    }
    return new Elector(new Campaign(this));
  }

  static String defaultCandidate() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("localhost");
    }
    // Host and pid say where the candidate runs; the suffix makes it this elector's alone. Host
    // and pid alone are shared by pods on the host network and by containers whose JVM is pid 1
    // under one host name, and two live candidates with one id would wait on each other's lease.
    return host
        + "-"
        + ProcessHandle.current().pid()
        + "-"
        + UUID.randomUUID().toString().substring(0, 8);
  }
}
