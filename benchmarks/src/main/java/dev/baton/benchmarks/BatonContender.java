package dev.baton.benchmarks;

import dev.baton.conformance.FaultInjector;
import dev.baton.conformance.FaultProxy;
import dev.baton.election.LeaseStore;
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
    Optional<FaultProxy> proxy = serverAddress.map(FaultProxy::start);
    try {
      OpenedStore opened = opener.open(candidate, proxy);
      RecordingStore store = new RecordingStore(opened.store());
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

  @Override
  public void close() throws Exception {
    if (shared != null) {
      shared.close();
    }
  }
}
