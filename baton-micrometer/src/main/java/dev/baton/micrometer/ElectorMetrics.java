package dev.baton.micrometer;

import static java.util.Objects.requireNonNull;

import dev.baton.election.Elector;
import dev.baton.election.ElectorObserver;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.StepDownReason;
import dev.baton.election.Term;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer meters for one {@link Elector}, tagged {@code election}, {@code candidate} and {@code
 * backend}. Pass it to {@link dev.baton.election.ElectorBuilder#observer} and, once the elector is
 * built, call {@link #bindTo(Elector)} before starting it:
 *
 * <pre>{@code
 * ElectorMetrics metrics = ElectorMetrics.builder(registry).backend("jdbc").build();
 * Elector elector = Elector.builder(store).election("billing").observer(metrics).build();
 * metrics.bindTo(elector);
 * elector.start();
 * }</pre>
 *
 * <p>Meters (Prometheus names in brackets):
 *
 * <ul>
 *   <li>{@code baton.election.leader} gauge, 1 while this candidate leads, else 0 [{@code
 *       baton_election_leader}]; with {@link Builder#clientGoStatus(boolean)} also {@code
 *       leader.election.master.status} tagged {@code name} = election (as client-go exports it) and
 *       {@code candidate} [{@code leader_election_master_status}];
 *   <li>{@code baton.election.terms} counter, terms granted to this candidate [{@code
 *       baton_election_terms_total}];
 *   <li>{@code baton.election.step.downs} counter tagged {@code reason} ({@code deadline_passed},
 *       {@code lease_lost}, {@code stepped_down}, {@code work_failed}, {@code closed}) [{@code
 *       baton_election_step_downs_total}];
 *   <li>{@code baton.election.renewal} timer, confirmed renewals and how long each took [{@code
 *       baton_election_renewal_seconds}];
 *   <li>{@code baton.election.store.errors} counter tagged {@code operation} ({@code renew} for a
 *       failed renewal, {@code acquire} for a follower's failed attempt) and {@code exception} (the
 *       error's class) [{@code baton_election_store_errors_total}];
 *   <li>{@code baton.election.since.renewal} time gauge, how long ago the start of the last
 *       confirmed renewal (or the grant) was while leading, 0 while following; a leader steps down
 *       when it reaches the renew deadline, so alert well below it [{@code
 *       baton_election_since_renewal_seconds}];
 *   <li>{@code baton.election.takeover} timer, how long this candidate knew of no leader before it
 *       was granted: handover and failover as users see them; not recorded for a first leader
 *       [{@code baton_election_takeover_seconds}].
 * </ul>
 *
 * <p>On the renewal path it costs one timer record; the rest is counted only when something
 * changes. Events before {@link #bindTo} are not counted. {@link #close()} removes the meters.
 */
public final class ElectorMetrics implements ElectorObserver, AutoCloseable {

  public static final String LEADER = "baton.election.leader";
  public static final String CLIENT_GO_STATUS = "leader.election.master.status";
  public static final String TERMS = "baton.election.terms";
  public static final String STEP_DOWNS = "baton.election.step.downs";
  public static final String RENEWAL = "baton.election.renewal";
  public static final String STORE_ERRORS = "baton.election.store.errors";
  public static final String SINCE_RENEWAL = "baton.election.since.renewal";
  public static final String TAKEOVER = "baton.election.takeover";

  private final MeterRegistry registry;
  private final String backend;
  private final boolean clientGoStatus;
  private final Tags extraTags;

  private volatile Bound bound;

  private ElectorMetrics(Builder b) {
    this.registry = b.registry;
    this.backend = b.backend;
    this.clientGoStatus = b.clientGoStatus;
    this.extraTags = b.extraTags;
  }

  public static Builder builder(MeterRegistry registry) {
    return new Builder(registry);
  }

  /**
   * Registers this elector's meters; the election and candidate tags are read from it. An instance
   * binds to one elector, once.
   *
   * @throws IllegalStateException when already bound
   */
  public synchronized void bindTo(Elector elector) {
    requireNonNull(elector, "elector");
    if (bound != null) {
      throw new IllegalStateException(
          "ElectorMetrics is bound to " + bound.elector + " already; use one per elector");
    }
    bound = new Bound(elector);
  }

  /**
   * Removes this elector's meters from the registry (call it when the elector is closed for good).
   */
  @Override
  public synchronized void close() {
    Bound b = bound;
    if (b != null) {
      b.meters.forEach(registry::remove);
    }
  }

  @Override
  public void termStarted(Term term, Optional<Duration> withoutLeader) {
    Bound b = bound;
    if (b == null) {
      return;
    }
    b.markConfirmed(term);
    b.term = term;
    b.terms.increment();
    withoutLeader.ifPresent(b.takeover::record);
  }

  @Override
  public void termEnded(Term term, StepDownReason reason) {
    Bound b = bound;
    if (b == null) {
      return;
    }
    if (b.term == term) {
      b.term = null;
    }
    b.stepDowns.get(reason).increment();
  }

  @Override
  public void renewed(Term term, Duration latency) {
    Bound b = bound;
    if (b == null) {
      return;
    }
    b.markConfirmed(term);
    b.renewal.record(latency);
  }

  @Override
  public void renewalFailed(Term term, RuntimeException cause) {
    Bound b = bound;
    if (b != null) {
      b.storeError("renew", cause);
    }
  }

  @Override
  public void campaignFailed(RuntimeException cause) {
    Bound b = bound;
    if (b != null) {
      b.storeError("acquire", cause);
    }
  }

  /** The kind of a store error: the store's generic wrapper says less than what it wraps. */
  static String kind(RuntimeException e) {
    Throwable shown =
        e.getClass() == LeaseStoreException.class && e.getCause() != null ? e.getCause() : e;
    return shown.getClass().getSimpleName();
  }

  /** The meters of the bound elector; state read by gauges on any thread is volatile. */
  private final class Bound {
    final Elector elector;
    final Tags tags;
    final List<Meter> meters = new ArrayList<>();
    final Counter terms;
    final Map<StepDownReason, Counter> stepDowns = new EnumMap<>(StepDownReason.class);
    final Timer renewal;
    final Timer takeover;
    volatile Term term;

    /** Registry monotonic time at which the last confirmed call began. */
    volatile long confirmedAtNanos;

    Bound(Elector elector) {
      this.elector = elector;
      this.tags =
          Tags.of(
                  Tag.of("election", elector.election()),
                  Tag.of("candidate", elector.candidate()),
                  Tag.of("backend", backend))
              .and(extraTags);
      add(
          Gauge.builder(LEADER, elector, e -> e.isLeader() ? 1 : 0)
              .description("1 while this candidate leads the election, else 0")
              .tags(tags)
              .strongReference(true)
              .register(registry));
      if (clientGoStatus) {
        add(
            Gauge.builder(CLIENT_GO_STATUS, elector, e -> e.isLeader() ? 1 : 0)
                .description("Leader status as client-go exports it: 1 while leading, else 0")
                .tags(
                    Tags.of(
                            Tag.of("name", elector.election()),
                            Tag.of("candidate", elector.candidate()))
                        .and(extraTags))
                .strongReference(true)
                .register(registry));
      }
      terms =
          add(
              Counter.builder(TERMS)
                  .description("Terms granted to this candidate")
                  .tags(tags)
                  .register(registry));
      for (StepDownReason reason : StepDownReason.values()) {
        stepDowns.put(
            reason,
            add(
                Counter.builder(STEP_DOWNS)
                    .description("Terms this candidate ended, by reason")
                    .tags(tags)
                    .tag("reason", reason.name().toLowerCase(Locale.ROOT))
                    .register(registry)));
      }
      renewal =
          add(
              Timer.builder(RENEWAL)
                  .description("Confirmed renewals and how long each took")
                  .tags(tags)
                  .register(registry));
      takeover =
          add(
              Timer.builder(TAKEOVER)
                  .description("How long this candidate knew of no leader before it was granted")
                  .tags(tags)
                  .register(registry));
      add(
          TimeGauge.builder(SINCE_RENEWAL, this, TimeUnit.NANOSECONDS, Bound::sinceConfirmedNanos)
              .description(
                  "Time since the start of the last confirmed renewal while leading, 0 while following")
              .tags(tags)
              .strongReference(true)
              .register(registry));
    }

    <M extends Meter> M add(M meter) {
      meters.add(meter);
      return meter;
    }

    /**
     * A term is valid until renewDeadline after its last confirmed call began, so that start is now
     * + remaining - renewDeadline; read at each confirmation, it stays exact afterwards.
     */
    void markConfirmed(Term t) {
      long now = registry.config().clock().monotonicTime();
      confirmedAtNanos = now + t.remaining().toNanos() - elector.renewDeadline().toNanos();
    }

    double sinceConfirmedNanos() {
      if (term == null) {
        return 0;
      }
      return Math.max(0, registry.config().clock().monotonicTime() - confirmedAtNanos);
    }

    void storeError(String operation, RuntimeException cause) {
      // Counters are found or created per kind: the set of kinds is small but not known up front.
      Counter.builder(STORE_ERRORS)
          .description("Store calls that failed, by operation and exception")
          .tags(tags)
          .tag("operation", operation)
          .tag("exception", kind(cause))
          .register(registry)
          .increment();
    }
  }

  /** Options for {@link ElectorMetrics}; {@link #backend} names the store in the tags. */
  public static final class Builder {
    private final MeterRegistry registry;
    private String backend = "unknown";
    private boolean clientGoStatus;
    private Tags extraTags = Tags.empty();

    private Builder(MeterRegistry registry) {
      this.registry = requireNonNull(registry, "registry");
    }

    /**
     * The {@code backend} tag: {@code jdbc}, {@code zookeeper}, {@code etcd}, {@code kubernetes}...
     * Default {@code unknown}.
     */
    public Builder backend(String backend) {
      requireNonNull(backend, "backend");
      if (backend.isBlank()) {
        throw new IllegalArgumentException("backend must not be blank");
      }
      this.backend = backend;
      return this;
    }

    /**
     * Also export the leader gauge as client-go's {@code leader_election_master_status}. Default
     * off.
     */
    public Builder clientGoStatus(boolean clientGoStatus) {
      this.clientGoStatus = clientGoStatus;
      return this;
    }

    /** Tags added to every meter (an application or region tag, say). */
    public Builder tags(Iterable<Tag> tags) {
      this.extraTags = Tags.of(requireNonNull(tags, "tags"));
      return this;
    }

    public ElectorMetrics build() {
      return new ElectorMetrics(this);
    }
  }
}
