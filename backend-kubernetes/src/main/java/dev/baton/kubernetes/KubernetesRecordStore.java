package dev.baton.kubernetes;

import static java.util.Objects.requireNonNull;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionRecord;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.RecordStore;
import dev.baton.election.RecordStore.RecordWatcher;
import dev.baton.election.Subscription;
import dev.baton.election.VersionedRecord;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.net.HttpURLConnection;
import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Election records as {@code coordination.k8s.io/v1} Lease objects, one per election, named after
 * it, in one namespace. The fields are the ones Kubernetes components and client-go's {@code
 * LeaseLock} use, so either side can read and take over the other's Lease.
 *
 * <p>Every write is a PUT carrying the {@code resourceVersion} last seen (read, written or
 * delivered by a watch); the API server refuses it with 409 when the Lease changed in between,
 * which is a normal "somebody else wrote first". Every watch of the store goes through one watch of
 * all Leases in the namespace ({@link NamespaceLeaseWatch}), a GET with {@code watch=true}: the
 * "watch" verb on leases in that namespace, no "list".
 *
 * <p>Each call runs with the caller's client re-derived to a request timeout of the call timeout
 * and no retries (fabric8 retries with back-off by default, which can stretch one call far past a
 * renew deadline), and is also cut off after the call timeout by this store, because a connection
 * timeout cannot be changed on a client that already exists.
 */
final class KubernetesRecordStore implements RecordStore {

  private static final Logger log = LoggerFactory.getLogger(KubernetesRecordStore.class);

  /** A DNS subdomain (RFC 1123), the rule for Lease names. */
  private static final Pattern LEASE_NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private final KubernetesClient client;
  private final String namespace;
  private final Duration callTimeout;
  private final KubernetesClient owned;
  private final String server;
  private final ExecutorService calls;

  /**
   * The Lease object last read or written per election, so that a replace from it, or from the one
   * the watch last delivered, keeps labels and fields it does not manage. Both, because a watch
   * event and a call's answer arrive in no particular order.
   */
  private final ConcurrentMap<String, Lease> lastSeen = new ConcurrentHashMap<>();

  /** The one watch of the namespace's Leases, for every watcher of this store. */
  private final NamespaceLeaseWatch leaseWatch;

  /**
   * Per election, while calls are in flight: how many, and the store's watch waiting to open until
   * they end. A watch is a connection of its own and a WebSocket handshake; opened beside a
   * campaign's first GET and POST it competes with them for the CPU and for a fresh client's
   * connections (it added 15-20 ms to the first leader on the mock). It loses nothing by waiting: a
   * new watch begins with the Lease as it is.
   */
  private final ConcurrentMap<String, Traffic> traffic = new ConcurrentHashMap<>();

  /**
   * @param owned the client to close with this store, or null when the caller owns {@code client}
   */
  KubernetesRecordStore(
      KubernetesClient client, String namespace, Duration callTimeout, KubernetesClient owned) {
    requireNonNull(client, "client");
    this.namespace = requireNonNull(namespace, "namespace");
    this.callTimeout = requireNonNull(callTimeout, "callTimeout");
    this.owned = owned;
    int timeoutMillis = Math.toIntExact(callTimeout.toMillis());
    RequestConfig bounded =
        new RequestConfigBuilder(client.getConfiguration().getRequestConfig())
            .withRequestTimeout(timeoutMillis)
            .withRequestRetryBackoffLimit(0)
            .build();
    // Shares the caller's HTTP client and credentials; never closed (closing it would close them).
    this.client = client.newClient(bounded).adapt(KubernetesClient.class);
    this.server = serverOf(client.getMasterUrl());
    AtomicInteger threads = new AtomicInteger();
    this.calls =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "baton-kubernetes-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.leaseWatch =
        new NamespaceLeaseWatch(
            watcher -> leases().watch(watcher),
            name -> Optional.ofNullable(leases().withName(name).get()),
            calls,
            "namespace " + namespace + " at " + server);
    // A fresh client builds its JSON mapping of Leases on first use: tens of milliseconds on a
    // busy machine. Build it now, off the caller's thread, so that neither the first campaign nor
    // a follower's first write after a long quiet spell (it sends nothing while it follows) waits
    // for that on its way to the server.
    calls.execute(this::prepareJson);
  }

  private void prepareJson() {
    try {
      KubernetesSerialization json = client.getKubernetesSerialization();
      Lease lease =
          new LeaseBuilder()
              .withNewMetadata()
              .withName("baton")
              .withNamespace(namespace)
              .withResourceVersion("1")
              .endMetadata()
              .withNewSpec()
              .endSpec()
              .build();
      writeSpec(
          "baton",
          lease,
          new ElectionRecord("baton", Duration.ofSeconds(1), Instant.EPOCH, Instant.EPOCH, 0));
      json.unmarshal(json.asJson(lease), Lease.class);
      json.unmarshal(
          json.asJson(
              new StatusBuilder()
                  .withCode(HttpURLConnection.HTTP_CONFLICT)
                  .withReason("Conflict")
                  .build()),
          Status.class);
    } catch (RuntimeException e) {
      log.debug(
          "preparing the JSON mapping of Leases failed; the first call will do it instead", e);
    }
  }

  private static String serverOf(URL url) {
    // Scheme, host and port only: a URL could carry credentials, which must never be shown.
    return url.getProtocol()
        + "://"
        + url.getHost()
        + (url.getPort() < 0 ? "" : ":" + url.getPort());
  }

  private NonNamespaceOperation<Lease, LeaseList, Resource<Lease>> leases() {
    return client.leases().inNamespace(namespace);
  }

  @Override
  public Optional<VersionedRecord> read(String election) {
    String name = leaseName(election);
    Lease lease;
    try {
      lease = call(election, "read Lease", () -> leases().withName(name).get());
    } catch (KubernetesClientException e) {
      throw failure(election, "read Lease", e);
    }
    if (lease == null) {
      lastSeen.remove(election);
      return Optional.empty();
    }
    return Optional.of(seen(election, lease));
  }

  @Override
  public Optional<VersionedRecord> create(String election, ElectionRecord record) {
    String name = leaseName(election);
    Lease lease =
        new LeaseBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .endMetadata()
            .withNewSpec()
            .endSpec()
            .build();
    writeSpec(election, lease, record);
    try {
      return Optional.of(
          seen(election, call(election, "create Lease", () -> leases().resource(lease).create())));
    } catch (KubernetesClientException e) {
      if (e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
        return Optional.empty(); // AlreadyExists: another candidate created it first
      }
      throw failure(election, "create Lease", e);
    }
  }

  @Override
  public Optional<VersionedRecord> replace(
      String election, String expectedVersion, ElectionRecord record) {
    requireNonNull(expectedVersion, "expectedVersion");
    String name = leaseName(election);
    if (expectedVersion.isBlank()) {
      // A PUT without a resourceVersion overwrites unconditionally: never send one.
      return Optional.empty();
    }
    Lease known =
        withVersion(lastSeen.get(election), expectedVersion)
            .orElseGet(
                () ->
                    leaseWatch
                        .delivered(name)
                        .flatMap(l -> withVersion(l, expectedVersion))
                        .orElse(null));
    Lease lease =
        known != null
            ? new LeaseBuilder(known).build()
            : new LeaseBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(namespace)
                .endMetadata()
                .withNewSpec()
                .endSpec()
                .build();
    lease.getMetadata().setResourceVersion(expectedVersion);
    writeSpec(election, lease, record);
    try {
      return Optional.of(
          seen(election, call(election, "update Lease", () -> leases().resource(lease).update())));
    } catch (KubernetesClientException e) {
      if (e.getCode() == HttpURLConnection.HTTP_CONFLICT
          || e.getCode() == HttpURLConnection.HTTP_NOT_FOUND) {
        return Optional
            .empty(); // changed or deleted since expectedVersion: somebody else wrote first
      }
      throw failure(election, "update Lease", e);
    }
  }

  @Override
  public Optional<Subscription> watch(String election, RecordWatcher watcher) {
    requireNonNull(watcher, "watcher");
    Subscription watching = leaseWatch.add(leaseName(election), watcher, lastSeen.get(election));
    // The first watch opens it once the election's calls are done: opened beside a campaign's
    // first GET and POST it competes with them (see traffic).
    whenQuiet(election, leaseWatch::start);
    return Optional.of(watching);
  }

  @Override
  public void checkElectionName(String election) {
    leaseName(election);
  }

  @Override
  public String describe() {
    return "kubernetes (" + server + ", namespace " + namespace + ")";
  }

  @Override
  public void close() {
    leaseWatch.close();
    calls.shutdownNow();
    if (owned != null) {
      owned.close();
    }
  }

  private VersionedRecord seen(String election, Lease lease) {
    lastSeen.put(election, lease);
    return versioned(lease);
  }

  static VersionedRecord versioned(Lease lease) {
    return new VersionedRecord(toRecord(lease), lease.getMetadata().getResourceVersion());
  }

  private static Optional<Lease> withVersion(Lease lease, String version) {
    return lease != null && version.equals(lease.getMetadata().getResourceVersion())
        ? Optional.of(lease)
        : Optional.empty();
  }

  static ElectionRecord toRecord(Lease lease) {
    var spec = lease.getSpec();
    if (spec == null) {
      return new ElectionRecord("", Duration.ZERO, Instant.EPOCH, Instant.EPOCH, 0);
    }
    return new ElectionRecord(
        spec.getHolderIdentity() == null ? "" : spec.getHolderIdentity(),
        Duration.ofSeconds(
            spec.getLeaseDurationSeconds() == null ? 0 : spec.getLeaseDurationSeconds()),
        spec.getAcquireTime() == null ? Instant.EPOCH : spec.getAcquireTime().toInstant(),
        spec.getRenewTime() == null ? Instant.EPOCH : spec.getRenewTime().toInstant(),
        spec.getLeaseTransitions() == null ? 0 : spec.getLeaseTransitions());
  }

  /**
   * Sets the fields client-go's LeaseLock writes; leaves any others (strategy, preferredHolder) as
   * they were.
   */
  private static void writeSpec(String election, Lease lease, ElectionRecord record) {
    var spec = lease.getSpec();
    spec.setHolderIdentity(record.holder());
    long seconds =
        record.leaseDuration().getSeconds() + (record.leaseDuration().getNano() > 0 ? 1 : 0);
    if (seconds > Integer.MAX_VALUE
        || record.transitions() > Integer.MAX_VALUE
        || record.transitions() < 0) {
      throw new LeaseStoreException(
          election,
          "a Lease holds leaseDurationSeconds and leaseTransitions as 32-bit numbers; cannot store "
              + record);
    }
    spec.setLeaseDurationSeconds((int) seconds);
    spec.setAcquireTime(microTime(record.acquireTime()));
    spec.setRenewTime(microTime(record.renewTime()));
    spec.setLeaseTransitions((int) record.transitions());
  }

  /** A MicroTime as client-go writes it: UTC, microseconds. */
  private static ZonedDateTime microTime(Instant instant) {
    return ZonedDateTime.ofInstant(instant.truncatedTo(ChronoUnit.MICROS), ZoneOffset.UTC);
  }

  private String leaseName(String election) {
    requireNonNull(election, "election");
    if (election.length() > 253 || !LEASE_NAME.matcher(election).matches()) {
      throw new ConfigurationException(
          "election name '"
              + election
              + "' cannot name a Kubernetes Lease: use at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit");
    }
    return election;
  }

  /** Runs one API call, bounded by the call timeout whatever the client's own settings. */
  private <T> T call(String election, String what, Callable<T> call) {
    callStarted(election);
    try {
      return callBounded(election, what, call);
    } finally {
      callEnded(election);
    }
  }

  private <T> T callBounded(String election, String what, Callable<T> call) {
    Future<T> result;
    try {
      result = calls.submit(call);
    } catch (RejectedExecutionException e) {
      throw new LeaseStoreException(election, what + ": the store is closed", e);
    }
    try {
      return result.get(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      result.cancel(true);
      throw new LeaseStoreException(
          election,
          what
              + " "
              + namespace
              + "/"
              + election
              + ": no answer from "
              + server
              + " within "
              + callTimeout.toMillis()
              + " ms",
          e);
    } catch (InterruptedException e) {
      result.cancel(true);
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(election, what + ": interrupted", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof KubernetesClientException) {
        throw (KubernetesClientException) cause; // its status code decides: the caller maps it
      }
      throw new LeaseStoreException(
          election, what + " " + namespace + "/" + election + " at " + server + " failed", cause);
    }
  }

  private void callStarted(String election) {
    traffic.compute(
        election,
        (k, t) -> {
          Traffic now = t == null ? new Traffic() : t;
          now.calls++;
          return now;
        });
  }

  private void callEnded(String election) {
    List<Runnable> due = new ArrayList<>();
    traffic.computeIfPresent(
        election,
        (k, t) -> {
          if (--t.calls > 0) {
            return t;
          }
          due.addAll(t.waiting);
          return null;
        });
    due.forEach(Runnable::run);
  }

  /**
   * Runs {@code open} at once when no call for {@code election} is in flight, else when the last
   * one ends.
   */
  private void whenQuiet(String election, Runnable open) {
    AtomicBoolean now = new AtomicBoolean();
    traffic.compute(
        election,
        (k, t) -> {
          if (t == null) {
            now.set(true);
            return null;
          }
          t.waiting.add(open);
          return t;
        });
    if (now.get()) {
      open.run();
    }
  }

  /** Calls in flight for one election, and watches waiting for them to end. */
  private static final class Traffic {
    int calls;
    final List<Runnable> waiting = new ArrayList<>();
  }

  private LeaseStoreException failure(String election, String what, KubernetesClientException e) {
    String hint =
        e.getCode() == HttpURLConnection.HTTP_FORBIDDEN
                || e.getCode() == HttpURLConnection.HTTP_UNAUTHORIZED
            ? " (the service account needs get, create, update and watch on leases.coordination.k8s.io in namespace "
                + namespace
                + "; see rbac.yaml)"
            : "";
    String status = e.getCode() > 0 ? "HTTP " + e.getCode() + ": " : "";
    return new LeaseStoreException(
        election,
        what
            + " "
            + namespace
            + "/"
            + election
            + " at "
            + server
            + " failed: "
            + status
            + e.getMessage()
            + hint,
        e);
  }
}
