package dev.baton.election;

import static java.util.Objects.requireNonNull;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
  final List<ElectionListener> listeners = new ArrayList<>();
  final List<ElectorObserver> observers = new ArrayList<>();

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
    return this;
  }

  /** How long a leader goes on without a confirmed renewal before it steps down. Default 10 s. */
  public ElectorBuilder renewDeadline(Duration renewDeadline) {
    this.renewDeadline = requireNonNull(renewDeadline, "renewDeadline");
    return this;
  }

  /** How often a leader renews and a polling follower tries. Default 2 s. */
  public ElectorBuilder retryPeriod(Duration retryPeriod) {
    this.retryPeriod = requireNonNull(retryPeriod, "retryPeriod");
    return this;
  }

  /**
   * Reads {@code election.name}, {@code election.candidate-id} and the three durations; values
   * set on the builder before or after this call win in the order of the calls.
   */
  public ElectorBuilder configure(ElectionProperties properties) {
    requireNonNull(properties, "properties");
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
   * Runs {@code work} for every term this node leads: started with the term, stopped (the
   * returned {@link AutoCloseable} closed) when it ends, started again with the next term.
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

  /** Where blocking store calls and listener callbacks run. Default: a shared elastic pool. */
  public ElectorBuilder executor(Executor executor) {
    this.worker = requireNonNull(executor, "executor");
    return this;
  }

  /** The monotonic clock for deadlines. Default: {@link System#nanoTime()}. */
  public ElectorBuilder clock(MonotonicClock clock) {
    this.clock = requireNonNull(clock, "clock");
    return this;
  }

  public Elector build() {
    if (election == null || election.isBlank()) {
      throw new ConfigurationException(ElectionProperties.NAME + " (election) must not be blank, but was " + (election == null ? "not set" : "'" + election + "'"));
    }
    if (candidate == null) {
      candidate = defaultCandidate();
    }
    if (candidate.isBlank()) {
      throw new ConfigurationException(ElectionProperties.CANDIDATE_ID + " (candidate) must not be blank, but was '" + candidate + "'");
    }
    positive(ElectionProperties.LEASE_DURATION, "leaseDuration", leaseDuration);
    positive(ElectionProperties.RENEW_DEADLINE, "renewDeadline", renewDeadline);
    positive(ElectionProperties.RETRY_PERIOD, "retryPeriod", retryPeriod);
    if (renewDeadline.compareTo(leaseDuration) >= 0) {
      throw new ConfigurationException(
          "renewDeadline (" + ElectionProperties.RENEW_DEADLINE + ") must be shorter than leaseDuration (" + Durations.format(leaseDuration) + "), but was " + Durations.format(renewDeadline));
    }
    Duration jitteredRetry = Duration.ofNanos((long) (retryPeriod.toNanos() * Elector.JITTER));
    if (jitteredRetry.compareTo(renewDeadline) >= 0) {
      throw new ConfigurationException(
          "retryPeriod (" + ElectionProperties.RETRY_PERIOD + ") × " + Elector.JITTER + " must be shorter than renewDeadline (" + Durations.format(renewDeadline) + "), but retryPeriod was " + Durations.format(retryPeriod));
    }
    store.checkElectionName(election);
    if (scheduler == null) {
      scheduler = SharedExecutors.scheduler();
    }
    if (worker == null) {
      worker = SharedExecutors.worker();
    }
    return new Elector(new Campaign(this));
  }

  private static void positive(String key, String field, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw new ConfigurationException(field + " (" + key + ") must be positive, but was " + Durations.format(d));
    }
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
    // under one host name, and a store re-grants a live lease to its holder's id at once.
    return host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
  }
}
