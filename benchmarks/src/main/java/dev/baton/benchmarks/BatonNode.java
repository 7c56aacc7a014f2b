package dev.baton.benchmarks;

import dev.baton.conformance.FaultInjector;
import dev.baton.conformance.FaultProxy;
import dev.baton.election.ElectionListener;
import dev.baton.election.Elector;
import dev.baton.election.Term;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongSupplier;

/** A candidate running Baton's {@link Elector} on its own store. */
final class BatonNode extends Node {

  private final RecordingStore store;
  private final AutoCloseable resources;
  private final Elector elector;

  BatonNode(
      String id,
      Timeline timeline,
      FaultInjector link,
      Optional<FaultProxy> proxy,
      Optional<WireLog> wire,
      LongSupplier requests,
      RecordingStore store,
      AutoCloseable resources,
      Settings settings,
      String election) {
    super(id, timeline, link, proxy, requests, wire);
    this.store = store;
    this.resources = resources;
    this.elector =
        Elector.builder(store)
            .election(election)
            .candidate(id)
            .leaseDuration(settings.leaseDuration())
            .renewDeadline(settings.renewDeadline())
            .retryPeriod(settings.retryPeriod())
            .listener(
                new ElectionListener() {
                  @Override
                  public void onElected(Term term) {
                    elected();
                  }

                  @Override
                  public void onRevoked(Term term) {
                    revoked();
                  }
                })
            .build();
  }

  @Override
  void start() {
    elector.start();
  }

  /** {@code close()}: ends the term (work stopped), then releases the lease. */
  @Override
  void leave() {
    elector.close();
  }

  @Override
  boolean believesLeader() {
    return elector.isLeader();
  }

  @Override
  OptionalLong lastConfirmedRenewalNanos() {
    return store.confirmedAny()
        ? OptionalLong.of(store.lastConfirmedStartNanos())
        : OptionalLong.empty();
  }

  @Override
  OptionalLong storeCalls() {
    return OptionalLong.of(store.calls());
  }

  boolean knowsLeader() {
    return elector.currentLeader().isPresent();
  }

  @Override
  void closeClient() throws Exception {
    try {
      elector.close();
    } finally {
      try {
        store.close();
      } finally {
        if (resources != null) {
          resources.close();
        }
      }
    }
  }
}
