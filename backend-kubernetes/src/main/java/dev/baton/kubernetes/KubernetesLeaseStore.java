package dev.baton.kubernetes;

import static java.util.Objects.requireNonNull;

import dev.baton.election.LeaseStore;
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
 * LeaseStore store = KubernetesLeaseStore.builder(client).namespace("billing").build();
 * }</pre>
 *
 * <p>Expiry is judged as client-go judges it: each follower counts the {@code
 * leaseDurationSeconds} written in the Lease from when it saw the Lease change ({@link
 * ObservedTimeLeaseStore}). A follower that starts while a Lease is held therefore waits one lease
 * duration before it may take over, even if the holder is long gone; a released Lease (empty
 * {@code holderIdentity}) is taken at once. The fencing token is {@code leaseTransitions}.
 *
 * <p>Followers watch their Lease and see every renewal through the watch, so they send no request
 * while a holder renews; the store tells them when the holder changes and when the lease they saw
 * last runs out, and a takeover is then one PUT from the Lease the watch delivered.
 *
 * <p>The client stays the caller's: the store never closes it. Each call is bounded by the call
 * timeout (default 3 s) and is not retried by fabric8, whatever the client's own request timeout
 * and retry settings, so keep the call timeout well under the renew deadline.
 */
public final class KubernetesLeaseStore {

  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(3);

  private KubernetesLeaseStore() {}

  /** A store on Leases in {@code namespace}, with the default call timeout. */
  public static LeaseStore create(KubernetesClient client, String namespace) {
    return builder(client).namespace(namespace).build();
  }

  /** Starts a store on {@code client}, which the caller owns and closes. */
  public static Builder builder(KubernetesClient client) {
    return new Builder(requireNonNull(client, "client"));
  }

  public static final class Builder {
    private final KubernetesClient client;
    private String namespace;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private MonotonicClock clock = MonotonicClock.system();
    private Clock wallClock = Clock.systemUTC();

    private Builder(KubernetesClient client) {
      this.client = client;
      this.namespace = client.getNamespace() == null ? "default" : client.getNamespace();
    }

    /** The namespace of the Lease objects; default: the client's namespace, else {@code default}. */
    public Builder namespace(String namespace) {
      requireNonNull(namespace, "namespace");
      if (namespace.isBlank()) {
        throw new IllegalArgumentException("namespace must not be blank");
      }
      this.namespace = namespace;
      return this;
    }

    /** The longest any one API call may take before it fails with a LeaseStoreException. */
    public Builder callTimeout(Duration callTimeout) {
      requireNonNull(callTimeout, "callTimeout");
      if (callTimeout.isNegative() || callTimeout.isZero() || callTimeout.toMillis() > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("callTimeout must be positive (and under 24 days), but was " + callTimeout);
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

    public LeaseStore build() {
      return open(this, null);
    }
  }

  /** For the provider: a store that closes {@code owned} when it is closed. */
  static LeaseStore open(KubernetesClient owned, String namespace, Duration callTimeout) {
    return open(builder(owned).namespace(namespace).callTimeout(callTimeout), owned);
  }

  private static LeaseStore open(Builder b, KubernetesClient owned) {
    return new ObservedTimeLeaseStore(new KubernetesRecordStore(b.client, b.namespace, b.callTimeout, owned), b.clock, b.wallClock);
  }
}
