package dev.baton.spring.boot;

import dev.baton.election.Elector;
import dev.baton.election.Term;
import java.time.Duration;
import java.util.Optional;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code election} in {@code /actuator/health}. Following is healthy: another instance leads. Down
 * when this instance still holds a term past its renew deadline (its elector is stuck and must not
 * be trusted to act), or when the store has failed for longer than the lease lasts (no instance can
 * lead or renew through it).
 */
final class ElectionHealthIndicator implements HealthIndicator {

  private final Elector elector;
  private final ElectionStatus status;

  ElectionHealthIndicator(Elector elector, ElectionStatus status) {
    this.elector = elector;
    this.status = status;
  }

  @Override
  public Health health() {
    Health.Builder h =
        new Health.Builder()
            .withDetail("election", elector.election())
            .withDetail("candidate", elector.candidate());
    if (!elector.isRunning()) {
      return h.unknown().withDetail("reason", "the elector is not running").build();
    }
    h.withDetail("leading", elector.isLeader());
    elector.currentLeader().ifPresent(l -> h.withDetail("leader", l));
    Optional<Term> term = status.term();
    if (term.isPresent() && !term.get().isValid() && !term.get().isEnded()) {
      return h.down()
          .withDetail(
              "reason",
              "leader past its renew deadline ("
                  + ms(elector.renewDeadline())
                  + ") and not yet stepped down")
          .build();
    }
    Duration failing = status.failingFor(elector.renewDeadline());
    if (failing.compareTo(elector.leaseDuration()) > 0) {
      h.down()
          .withDetail(
              "reason",
              "the store has failed for "
                  + ms(failing)
                  + ", longer than the lease ("
                  + ms(elector.leaseDuration())
                  + ")");
      status.lastError().ifPresent(e -> h.withDetail("lastError", e));
      return h.build();
    }
    return h.up().build();
  }

  private static String ms(Duration d) {
    return d.toMillis() + " ms";
  }
}
