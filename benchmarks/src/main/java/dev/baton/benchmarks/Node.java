package dev.baton.benchmarks;

import dev.baton.conformance.FaultInjector;
import dev.baton.conformance.FaultProxy;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongSupplier;

/**
 * One candidate of one contender: a client of its own that reaches the server only through its own
 * {@link FaultProxy} (or, for the in-memory store, a simulated link), and the library's election
 * recipe on top. Reports to the {@link Timeline} when the library tells it that it leads or no
 * longer leads.
 */
abstract class Node implements AutoCloseable {

  final String id;
  final Timeline timeline;
  private final FaultInjector link;
  private final Optional<FaultProxy> proxy;
  private final LongSupplier requests;
  private final Optional<WireLog> wire;

  /**
   * @param requests requests this node sent to the server so far, counted as the contender says
   *     ({@link Contender#requestsCountedAs()}); negative when they cannot be counted
   */
  Node(
      String id,
      Timeline timeline,
      FaultInjector link,
      Optional<FaultProxy> proxy,
      LongSupplier requests) {
    this(id, timeline, link, proxy, requests, Optional.empty());
  }

  /**
   * @param wire what the node and its server said to each other, message by message, where it can
   *     be seen ({@link WireLog})
   */
  Node(
      String id,
      Timeline timeline,
      FaultInjector link,
      Optional<FaultProxy> proxy,
      LongSupplier requests,
      Optional<WireLog> wire) {
    this.id = id;
    this.timeline = timeline;
    this.link = link;
    this.proxy = proxy;
    this.requests = requests;
    this.wire = wire;
  }

  /** Starts campaigning; returns at once or once the library has registered the candidate. */
  abstract void start() throws Exception;

  /** Leaves gracefully: gives leadership up (if held) the way the library documents it. */
  abstract void leave() throws Exception;

  /** Whether this node believes it leads now, as the library tells the application. */
  abstract boolean believesLeader();

  /**
   * The monotonic start time of the last renewal (or grant) the server confirmed, where the library
   * lets us see it: the lease cannot end before it plus the lease duration.
   */
  OptionalLong lastConfirmedRenewalNanos() {
    return OptionalLong.empty();
  }

  /**
   * LeaseStore calls the Elector made, for Baton nodes: one renewal is one call, whatever it costs
   * on the wire.
   */
  OptionalLong storeCalls() {
    return OptionalLong.empty();
  }

  /** Closes the library's objects and the client; the proxy is closed by {@link #close()}. */
  abstract void closeClient() throws Exception;

  final FaultInjector link() {
    return link;
  }

  final long requestsSent() {
    return requests.getAsLong();
  }

  final long bytesToServer() {
    return proxy.map(FaultProxy::bytesToServer).orElse(0L);
  }

  final long bytesToClient() {
    return proxy.map(FaultProxy::bytesToClient).orElse(0L);
  }

  final Optional<WireLog> wire() {
    return wire;
  }

  final boolean hasNetwork() {
    return proxy.isPresent();
  }

  final void elected() {
    timeline.elected(id);
  }

  final void revoked() {
    timeline.revoked(id);
  }

  @Override
  public final void close() throws Exception {
    try {
      closeClient();
    } finally {
      proxy.ifPresent(FaultProxy::close);
    }
  }

  @Override
  public String toString() {
    return id;
  }
}
