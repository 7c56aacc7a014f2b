package dev.baton.conformance;

import static java.util.Objects.requireNonNull;
import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Acquisition;
import dev.baton.election.Elector;
import dev.baton.election.ElectorObserver;
import dev.baton.election.ForwardingLeaseStore;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import dev.baton.election.Subscription;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;

/**
 * A graceful stop (close, SIGTERM) right after a grant the server applied but whose answer never
 * came (issue 36, section 1), on a real server: candidate a's elector campaigns through a {@link
 * FaultProxy} that holds the answers, its first attempt fails with the grant applied, the proxy
 * heals, and the elector is closed before it tries again. No term ever started, yet the server
 * names a: the close must give that grant back, so that b is granted well within half the lease,
 * not after all of it.
 *
 * <p>a's elector campaigns without a watch, on any store: a watch going live makes a follower look
 * again at once, which would find the grant its own and lead before the close. So it retries only
 * after its retry period, a sixth of the lease, long after the close.
 */
public final class StopAfterUnansweredGrant {

  /** What the scenario saw: how long from the close to b's grant, and b's lease. */
  public record Handover(Duration closeToGrant, Lease next) {}

  private StopAfterUnansweredGrant() {}

  /** The store, but followers poll: see the class comment. */
  private static final class WithoutWatch extends ForwardingLeaseStore {
    WithoutWatch(LeaseStore delegate) {
      super(delegate);
    }

    @Override
    public Optional<Subscription> watch(String election, Runnable changed) {
      return Optional.empty();
    }

    @Override
    public Optional<Subscription> follow(String election, String candidate, Runnable changed) {
      return Optional.empty();
    }

    @Override
    public void close() {
      // The caller's store: the caller closes it.
    }
  }

  /**
   * Runs the scenario on {@code election}, which must be new.
   *
   * @param throughProxy a's store, whose calls go through {@code proxy} and time out well within a
   *     second or two
   * @param other b's store, straight to the server
   * @param leaseDuration long (30 s is good), so that a wait for it shows
   * @param grantApplied true once the server holds a's grant (read straight from the server)
   */
  public static Handover run(
      LeaseStore throughProxy,
      FaultProxy proxy,
      LeaseStore other,
      String election,
      Duration leaseDuration,
      BooleanSupplier grantApplied) {
    return run(
        throughProxy,
        proxy::stopReadingAnswers,
        proxy,
        other,
        election,
        leaseDuration,
        grantApplied);
  }

  /**
   * {@link #run(LeaseStore, FaultProxy, LeaseStore, String, Duration, BooleanSupplier)} where a
   * grant takes several requests (Azure Blob: a read, then the lease's acquire): {@code
   * holdAnswers} makes {@code proxy} stop reading answers once the request to hold goes out.
   */
  public static Handover run(
      LeaseStore throughProxy,
      Runnable holdAnswers,
      FaultProxy proxy,
      LeaseStore other,
      String election,
      Duration leaseDuration,
      BooleanSupplier grantApplied) {
    requireNonNull(holdAnswers, "holdAnswers");
    requireNonNull(grantApplied, "grantApplied");
    AtomicBoolean failed = new AtomicBoolean();
    Elector a =
        Elector.builder(new WithoutWatch(throughProxy))
            .election(election)
            .candidate("a")
            .leaseDuration(leaseDuration)
            .renewDeadline(leaseDuration.multipliedBy(2).dividedBy(3))
            .retryPeriod(leaseDuration.dividedBy(6))
            .closeOnShutdown(false)
            .observer(
                new ElectorObserver() {
                  @Override
                  public void campaignFailed(RuntimeException cause) {
                    failed.set(true);
                  }
                })
            .build();
    try {
      holdAnswers.run();
      a.start();
      Awaitility.await("until the server applied a's grant and a's call failed without its answer")
          .atMost(leaseDuration.dividedBy(2))
          .until(() -> grantApplied.getAsBoolean() && failed.get());
      proxy.heal();
      assertThat(a.isLeader()).as("a never heard of its grant: no term started").isFalse();

      long t0 = System.nanoTime();
      a.close();
      Acquisition granted =
          Awaitility.await("until b is granted, well before a's unanswered lease could run out")
              .atMost(leaseDuration.dividedBy(2))
              .pollInterval(Duration.ofMillis(10))
              .until(() -> other.tryAcquire(election, "b", leaseDuration), Acquisition::isGranted);
      Duration closeToGrant = Duration.ofNanos(System.nanoTime() - t0);
      return new Handover(closeToGrant, granted.lease().orElseThrow());
    } finally {
      proxy.heal();
      a.close();
    }
  }
}
