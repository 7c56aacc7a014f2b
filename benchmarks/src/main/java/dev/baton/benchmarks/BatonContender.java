package dev.baton.benchmarks;

import dev.baton.conformance.FaultInjector;
import dev.baton.conformance.FaultProxy;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.Subscription;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/** Baton's Elector on one backend; {@link Backends} makes one per server. */
final class BatonContender implements Contender {

  /** A store as one node opens it: connected through {@code through}, its node's proxy. */
  record OpenedStore(
      LeaseStore store,
      AutoCloseable resources,
      Optional<LongSupplier> requests,
      Optional<FaultInjector> link,
      Optional<WireLog> wire) {

    /** A store whose messages are not logged. */
    OpenedStore(
        LeaseStore store,
        AutoCloseable resources,
        Optional<LongSupplier> requests,
        Optional<FaultInjector> link) {
      this(store, resources, requests, link, Optional.empty());
    }
  }

  @FunctionalInterface
  interface Opener {
    /**
     * @param through the node's proxy, or empty for a store without a network
     */
    OpenedStore open(String node, Optional<FaultProxy> through) throws Exception;
  }

  private final String name;
  private final String server;
  private final Optional<InetSocketAddress> serverAddress;
  private final Settings settings;
  private final Map<String, String> storeSettings;
  private final String requestsCountedAs;
  private final Opener opener;
  private final Duration leaseDuration;
  private final AutoCloseable shared;
  private Revoker revoker;

  /** Ends a lease behind its holder's back, straight on the server, as an operator would. */
  @FunctionalInterface
  interface Revoker {
    void revoke(String election) throws Exception;
  }

  /**
   * How this backend's leases are deleted behind their holder's back, for the "lease lost" rounds;
   * {@code how} says it in the report.
   */
  BatonContender withRevoker(String how, Revoker revoker, AutoCloseable resources) {
    this.revoker = revoker;
    this.revokedHow = how;
    this.revokerResources = resources;
    return this;
  }

  private AutoCloseable revokerResources;

  private String revokedHow = "";

  Optional<Revoker> revoker() {
    return Optional.ofNullable(revoker);
  }

  String revokedHow() {
    return revokedHow;
  }

  BatonContender(
      String name,
      String server,
      Optional<InetSocketAddress> serverAddress,
      Settings settings,
      Map<String, String> storeSettings,
      String requestsCountedAs,
      Duration leaseDuration,
      Opener opener,
      AutoCloseable shared) {
    this.name = name;
    this.server = server;
    this.serverAddress = serverAddress;
    this.settings = settings;
    this.storeSettings = storeSettings;
    this.requestsCountedAs = requestsCountedAs;
    this.leaseDuration = leaseDuration;
    this.opener = opener;
    this.shared = shared;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String server() {
    return server;
  }

  @Override
  public String library() {
    return "Baton";
  }

  @Override
  public Map<String, String> settings() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put(
        "lease / renew deadline / retry",
        settings.leaseDuration().toMillis()
            + " / "
            + settings.renewDeadline().toMillis()
            + " / "
            + settings.retryPeriod().toMillis()
            + " ms");
    s.putAll(storeSettings);
    return s;
  }

  @Override
  public String requestsCountedAs() {
    return requestsCountedAs;
  }

  @Override
  public Duration leaseDuration() {
    return leaseDuration;
  }

  @Override
  public Node newNode(String election, String candidate, Timeline timeline) throws Exception {
    return newNode(election, candidate, timeline, true);
  }

  /**
   * @param pushLoss false to withhold the store's {@code watchLease} from the elector, so that its
   *     leader learns of a lost lease at its next renewal only, as before the push
   */
  Node newNode(String election, String candidate, Timeline timeline, boolean pushLoss)
      throws Exception {
    Optional<FaultProxy> proxy = serverAddress.map(FaultProxy::start);
    try {
      OpenedStore opened = opener.open(candidate, proxy);
      LeaseStore opens = pushLoss ? opened.store() : withoutLeaseWatch(opened.store());
      RecordingStore store = new RecordingStore(opens);
      FaultInjector link =
          opened
              .link()
              .orElseGet(
                  () ->
                      proxy.orElseThrow(
                          () -> new IllegalStateException(name + ": no link to cut")));
      LongSupplier requests = opened.requests().orElse(store::calls);
      return new BatonNode(
          candidate,
          timeline,
          link,
          proxy,
          opened.wire(),
          requests,
          store,
          opened.resources(),
          settings,
          election);
    } catch (Exception | Error e) {
      proxy.ifPresent(FaultProxy::close);
      throw e;
    }
  }

  private static LeaseStore withoutLeaseWatch(LeaseStore store) {
    return new ForwardingLeaseStore(store) {
      @Override
      public Optional<Subscription> watchLease(Lease lease, Runnable lost) {
        return Optional.empty();
      }
    };
  }

  @Override
  public void close() throws Exception {
    try {
      if (revokerResources != null) {
        revokerResources.close();
      }
    } finally {
      if (shared != null) {
        shared.close();
      }
    }
  }
}
