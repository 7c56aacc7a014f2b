package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import dev.baton.jdbc.LeaseStatements.LeaseRow;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What a renewal whose update counted no row makes of the row read after it. */
class RenewedOrLostTest {

  private static final long TTL = 3000;
  private final Lease lease =
      new Lease("orders", "node-a", FencingToken.of(7), Duration.ofMillis(TTL), "");

  @Test
  void aLiveRowOfThisLeaseThatTheUpdateDidNotTouchIsNoRenewal() {
    // The row was last renewed 2.9 s ago; the call took 50 ms: nothing renewed it in between.
    LeaseRow stale = new LeaseRow("node-a", 7, TTL, 0, 100);
    assertThatThrownBy(
            () ->
                JdbcLeaseStore.renewedOrLost(
                    lease, TTL, Optional.of(stale), TimeUnit.MILLISECONDS.toNanos(50)))
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining("did not reach its row")
        .hasMessageContaining("100 ms");
  }

  @Test
  void aRowRenewedSinceTheCallBeganIsARenewalThoughTheUpdateCountedNoRow() {
    // MariaDB counts no row for a renewal that changed nothing (within the grant's millisecond).
    LeaseRow fresh = new LeaseRow("node-a", 7, TTL, 0, TTL - 20);
    Lease renewed =
        JdbcLeaseStore.renewedOrLost(
            lease, TTL, Optional.of(fresh), TimeUnit.MILLISECONDS.toNanos(30));
    assertThat(renewed.token()).isEqualTo(lease.token());
  }

  @Test
  void aRowOfAnotherTermOrNoRowIsALostLease() {
    assertThatThrownBy(
            () ->
                JdbcLeaseStore.renewedOrLost(
                    lease, TTL, Optional.of(new LeaseRow("node-b", 8, TTL, 0, TTL)), 0))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("now held by node-b with token 8");
    assertThatThrownBy(() -> JdbcLeaseStore.renewedOrLost(lease, TTL, Optional.empty(), 0))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("expired or was released");
  }
}
