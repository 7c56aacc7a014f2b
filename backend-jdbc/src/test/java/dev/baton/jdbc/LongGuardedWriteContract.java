package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.election.ElectionListener;
import dev.baton.election.Elector;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.Renewal;
import dev.baton.election.Term;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Fault 4 of issue 16: a guarded write holds its lease row's lock for longer than a renewal may
 * take, while the same store renews that lease in one batch with a hundred others. Implemented by
 * every database's contract: PostgreSQL, MariaDB and H2 (in memory and in a file).
 */
interface LongGuardedWriteContract {

  /** A lease lasts this long; its holder steps down at two thirds of it, the renew deadline. */
  Duration TTL = Duration.ofSeconds(3);

  Duration RENEW_DEADLINE = Duration.ofSeconds(2);

  /** The store that leads the elections and runs the guarded write. */
  JdbcLeaseStore leader();

  /** A store on the leader's pool and table whose calls give up within a second. */
  JdbcLeaseStore leaderWithCallTimeout(Duration callTimeout);

  String election(String what);

  @Test
  default void aGuardedWriteHeldForTwiceTheRenewDeadlineCostsTheOtherLeasesOfItsBatchNothing()
      throws Exception {
    JdbcLeaseStore store = leader();
    JdbcLeaseStore renewer = leaderWithCallTimeout(Duration.ofSeconds(1));
    Lease guarded = JdbcLeaseStoreContract.grant(store, election("guarded"), "node-a", TTL);
    List<Lease> batch = new ArrayList<>();
    batch.add(guarded);
    IntStream.range(0, 100)
        .forEach(
            i ->
                batch.add(
                    JdbcLeaseStoreContract.grant(store, election("beside-" + i), "node-a", TTL)));
    // The write ends when the batch renewal is back, or at twice the renew deadline: before the
    // fix, the renewal waited for the row and timed out, failing all hundred and one.
    try (RowHeldByAGuardedWrite held =
        RowHeldByAGuardedWrite.start(store, guarded, RENEW_DEADLINE.multipliedBy(2))) {
      long start = System.nanoTime();
      List<Renewal> outcomes = renewer.renewAll(batch);
      long tookMillis = (System.nanoTime() - start) / 1_000_000;
      boolean writeStillHeld = held.stillHeld();
      assertThat(held.finish()).isEqualTo("written");
      LoggerFactory.getLogger(LongGuardedWriteContract.class)
          .info(
              "{}: a batch renewal of {} leases, one of whose rows a guarded write held, came back in {} ms",
              store.describe(),
              batch.size(),
              tookMillis);
      assertThat(writeStillHeld)
          .as("the batch renewal came back while the guarded write held its row")
          .isTrue();
      assertThat(outcomes.subList(1, outcomes.size()))
          .as("the hundred leases beside the guarded one")
          .allSatisfy(r -> assertThat(r.failure()).as("outcome %s", r).isEmpty());
      // The locked row was not renewed, so it must not be reported renewed; nor is it lost.
      assertThat(outcomes.get(0).failure())
          .as("outcome of the lease whose row the guarded write held")
          .get()
          .isInstanceOf(LeaseStoreException.class)
          .isNotInstanceOf(LeaseLostException.class);
      // On its own, once the write committed, it renews as before.
      assertThat(store.renew(guarded).token()).isEqualTo(guarded.token());
    } finally {
      renewer.close();
    }
  }

  @Test
  default void aGuardedWriteHeldForTwiceTheRenewDeadlineCostsTheHundredElectorsBesideItNothing()
      throws Exception {
    JdbcLeaseStore store = leaderWithCallTimeout(Duration.ofSeconds(1));
    List<String> revoked = new CopyOnWriteArrayList<>();
    List<Elector> electors = new ArrayList<>();
    try {
      for (int i = 0; i <= 100; i++) {
        electors.add(
            Elector.builder(store)
                .election(election(i == 0 ? "guarded" : "beside-" + i))
                .candidate("node-a")
                .leaseDuration(TTL)
                .renewDeadline(RENEW_DEADLINE)
                .retryPeriod(Duration.ofMillis(500))
                .listener(
                    new ElectionListener() {
                      @Override
                      public void onRevoked(Term term) {
                        revoked.add(term.election());
                      }
                    })
                .build());
      }
      electors.forEach(Elector::start);
      await("until all 101 electors lead")
          .atMost(Duration.ofSeconds(30))
          .until(() -> electors.stream().allMatch(Elector::isLeader));
      Term guarded = electors.get(0).currentTerm().orElseThrow();
      long start = System.nanoTime();
      // Held for twice the renew deadline: every election's renewals come due meanwhile.
      String written =
          store.inTerm(
              guarded.election(),
              guarded.candidate(),
              guarded.token(),
              dsl -> {
                try {
                  // The fault itself, not a synchronisation: a write that takes this long.
                  TimeUnit.MILLISECONDS.sleep(RENEW_DEADLINE.multipliedBy(2).toMillis());
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  throw new IllegalStateException("interrupted in the guarded write", e);
                }
                return "written";
              });
      assertThat(written).isEqualTo("written");
      assertThat(System.nanoTime() - start)
          .as("the guarded write held its row for twice the renew deadline")
          .isGreaterThanOrEqualTo(RENEW_DEADLINE.multipliedBy(2).toNanos());
      assertThat(revoked)
          .as("elections whose leader stepped down")
          .allMatch(e -> e.equals(guarded.election()));
      assertThat(electors.subList(1, electors.size()))
          .as("the hundred electors beside the guarded write")
          .allMatch(Elector::isLeader);
      LoggerFactory.getLogger(LongGuardedWriteContract.class)
          .info(
              "{}: a guarded write held for {} ms; of 101 electors renewing in batches, {} stepped down: {}",
              store.describe(),
              (System.nanoTime() - start) / 1_000_000,
              revoked.size(),
              revoked);
    } finally {
      electors.forEach(Elector::close);
      store.close();
    }
  }
}
