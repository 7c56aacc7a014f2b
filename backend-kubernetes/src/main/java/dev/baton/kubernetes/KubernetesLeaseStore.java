package dev.baton.kubernetes;

import static java.util.Objects.requireNonNull;

import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.MonotonicClock;
import dev.baton.election.ObservedTimeLeaseStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;

/**
 * Leader election on {@code coordination.k8s.io/v1} Lease objects, interoperable with client-go's
 * {@code leaderelection} (and so with controllers and operators built on it): one Lease per
 * election, named after it, in one namespace.
 *
 * <pre>{@code
 * KubernetesLeaseStore store = KubernetesLeaseStore.builder(client).namespace("billing").build();
 * }</pre>
 *
 * <p>Expiry is judged as client-go judges it: each follower counts the {@code leaseDurationSeconds}
 * written in the Lease from when it saw the Lease change ({@link ObservedTimeLeaseStore}). A
 * follower that starts while a Lease is held therefore waits one lease duration before it may take
 * over, even if the holder is long gone; a released Lease (empty {@code holderIdentity}) is taken
 * at once. The fencing token is {@code leaseTransitions}.
 *
 * <p>Followers watch their Lease and see every renewal through the watch, so they send no request
 * while a holder renews; the store tells them when the holder changes and when the lease they saw
 * last runs out, and a takeover is then one PUT from the Lease the watch delivered.
 *
 * <p>A leader watches its Lease too ({@link #watchLease}) and hears at once that it was deleted or
 * taken, without waiting for its next renewal. All these watches, for every election of the store,
 * are one watch of the Leases in the store's namespace: one connection per store, not one per
 * Lease, at the price that it also delivers the namespace's other Leases (see docs/kubernetes.md).
 * A broken watch is resumed or opened afresh; the renewals cover the gap.
 *
 * <p>The client stays the caller's: the store never closes it. Each call is bounded by the call
 * timeout (default 3 s; at most half the renew deadline, see {@link CallTimeout}) and is not
 * retried by fabric8, whatever the client's own request timeout and retry settings.
 */
public final class KubernetesLeaseStore extends ForwardingLeaseStore {

  public static final Duration DEFAULT_CALL_TIMEOUT = CallTimeout.DEFAULT;

  // Lease semantics on the Lease objects, judged by observed time as client-go judges them: every
  // call goes to the shared adapter.
  private KubernetesLeaseStore(Builder b) {
    super(
        new ObservedTimeLeaseStore(
            new KubernetesRecordStore(
                b.client, b.namespace, b.callTimeout, b.closesClient ? b.client : null),
            b.clock,
            b.wallClock));
  }

  /** Starts a store on {@code client}, which the caller owns and closes. */
  public static Builder builder(KubernetesClient client) {
    return new Builder(requireNonNull(client, "client"));
  }

  /** Settings of a {@link KubernetesLeaseStore}, checked when set. */
  public static final class Builder {
    private final KubernetesClient client;
    private String namespace;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private MonotonicClock clock = MonotonicClock.system();
    private Clock wallClock = Clock.systemUTC();
    private boolean closesClient;

    private Builder(KubernetesClient client) {
      this.client = client;
      this.namespace = client.getNamespace() == null ? "default" : client.getNamespace();
    }

    /**
     * The namespace of the Lease objects; default: the client's namespace, else {@code default}.
     */
    public Builder namespace(String namespace) {
      requireNonNull(namespace, "namespace");
      if (namespace.isBlank()) {
        throw new ConfigurationException(
            "namespace: '" + namespace + "' is blank; give a namespace name");
      }
      this.namespace = namespace;
      return this;
    }

    /**
     * The longest any one API call may take before it fails with a LeaseStoreException (default 3
     * s): at most half the renew deadline it is used with ({@link CallTimeout}).
     */
    public Builder callTimeout(Duration callTimeout) {
      CallTimeout.check("callTimeout", callTimeout);
      if (callTimeout.toMillis() > Integer.MAX_VALUE) {
        throw new ConfigurationException(
            "callTimeout: " + callTimeout + " is longer than fabric8 can wait (24 days)");
      }
      this.callTimeout = callTimeout;
      return this;
    }

    /** The clock that measures how long a Lease stayed unchanged; the system's by default. */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    /** The clock for the acquire and renew times written for humans; UTC system time by default. */
    public Builder wallClock(Clock wallClock) {
      this.wallClock = requireNonNull(wallClock, "wallClock");
      return this;
    }

    /** For the provider: the store closes the client it was given, which the provider built. */
    Builder closesClient() {
      this.closesClient = true;
      return this;
    }

    public KubernetesLeaseStore build() {
      return new KubernetesLeaseStore(this);
    }
  }
}
