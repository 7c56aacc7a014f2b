package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The observed-time rules on a fake clock. Each "node" is its own {@link ObservedTimeLeaseStore}
 * with its own monotonic clock (offset from the others, as on different machines), all sharing one
 * compare-and-set record map, as processes share a Kubernetes API server, and one manual scheduler
 * for the expiry timers.
 */
class ObservedTimeLeaseStoreTest {

  private static final String ELECTION = "billing";
  private static final Clock WALL =
      Clock.fixed(Instant.parse("2026-11-22T10:00:00Z"), ZoneOffset.UTC);

  private final FakeClock time = new FakeClock();
  private final ManualScheduler scheduler = new ManualScheduler(time);
  private final CasRecords records = new CasRecords();
  private final ObservedTimeLeaseStore nodeA = node(0);
  private final ObservedTimeLeaseStore nodeB = node(987_654_321_000L);
  private final ObservedTimeLeaseStore nodeC = node(-42_000_000_000L);

  private ObservedTimeLeaseStore node(long clockOffsetNanos) {
    return new ObservedTimeLeaseStore(
        records, () -> time.nanoTime() + clockOffsetNanos, WALL, scheduler);
  }

  /** Moves every node's clock forward, firing the expiry timers that fall due on the way. */
  private void advance(Duration d) {
    scheduler.advance(d);
  }

  private static Lease granted(Acquisition acquisition) {
    assertThat(acquisition.isGranted()).as("granted: %s", acquisition).isTrue();
    return acquisition.lease().orElseThrow();
  }

  private static LeaseRecord held(Acquisition acquisition) {
    assertThat(acquisition.isGranted()).as("held: %s", acquisition).isFalse();
    return acquisition.holder().orElseThrow();
  }

  @Test
  void grants_a_free_election_with_the_ttl_rounded_up_to_whole_seconds() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofMillis(1500)));

    assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(2));
    assertThat(lease.token()).isEqualTo(FencingToken.of(0));
    ElectionRecord stored = records.current(ELECTION).record();
    assertThat(stored.holder()).isEqualTo("a");
    assertThat(stored.leaseDuration()).isEqualTo(Duration.ofSeconds(2));
    assertThat(stored.acquireTime()).isEqualTo(WALL.instant());
    assertThat(stored.renewTime()).isEqualTo(WALL.instant());
    assertThat(lease.handle()).isEqualTo(records.current(ELECTION).version());
  }

  @Test
  void refuses_others_until_the_recorded_duration_has_passed_since_they_saw_the_record() {
    granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    advance(Duration.ofSeconds(5)); // b sees the record only now, long after it was written

    LeaseRecord holder = held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    assertThat(holder.holder()).isEqualTo("a");
    assertThat(holder.expiresIn()).contains(Duration.ofSeconds(2));

    advance(Duration.ofMillis(1999));
    assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2))).expiresIn())
        .contains(Duration.ofMillis(1));

    advance(Duration.ofMillis(1));
    Lease lease = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    assertThat(lease.token()).isEqualTo(FencingToken.of(1));
  }

  @Test
  void honours_the_lease_duration_a_client_go_holder_wrote_not_the_local_ttl() {
    records.put(
        ELECTION,
        new ElectionRecord(
            "client-go-pod", Duration.ofSeconds(7), WALL.instant(), WALL.instant(), 3));

    LeaseRecord holder = held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    assertThat(holder.holder()).isEqualTo("client-go-pod");
    assertThat(holder.ttl()).isEqualTo(Duration.ofSeconds(7));
    assertThat(holder.token()).isEqualTo(FencingToken.of(3));
    assertThat(holder.renewedAt()).contains(WALL.instant());

    advance(Duration.ofSeconds(6));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));

    advance(Duration.ofSeconds(1));
    Lease lease = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    assertThat(lease.token()).isEqualTo(FencingToken.of(4));
    assertThat(records.current(ELECTION).record().leaseDuration()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void a_changed_record_restarts_the_followers_clock() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));

    advance(Duration.ofMillis(1500));
    nodeA.renew(lease);
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));

    // 2.5 s after b first saw the record: its first observation would have expired by now.
    advance(Duration.ofSeconds(1));
    assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2))).expiresIn())
        .contains(Duration.ofSeconds(1));

    advance(Duration.ofSeconds(1));
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
  }

  @Test
  void an_unchanged_record_does_not_restart_the_clock() {
    granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    advance(Duration.ofSeconds(1));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    advance(Duration.ofSeconds(1));

    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
  }

  @Test
  void release_lets_another_candidate_in_at_once_and_keeps_the_token_count() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(10)));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(10)));

    nodeA.release(lease);

    ElectionRecord released = records.current(ELECTION).record();
    assertThat(released.holder()).isEmpty();
    assertThat(released.leaseDuration()).isEqualTo(Duration.ofSeconds(1));
    assertThat(released.transitions()).isEqualTo(0);
    assertThat(nodeB.read(ELECTION)).isEmpty();
    assertThat(granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(10))).token())
        .isEqualTo(FencingToken.of(1));
  }

  @Test
  void release_of_a_lease_that_was_taken_over_leaves_the_new_holder_alone() {
    Lease old = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    advance(Duration.ofSeconds(1));
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));

    nodeA.release(old);

    assertThat(records.current(ELECTION).record().holder()).isEqualTo("b");
    assertThat(nodeC.read(ELECTION)).map(LeaseRecord::holder).contains("b");
  }

  @Test
  void a_takeover_that_loses_the_race_reports_the_winner() {
    granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    held(nodeC.tryAcquire(ELECTION, "c", Duration.ofSeconds(1)));
    advance(Duration.ofSeconds(1));
    records.beforeNextWrite(() -> granted(nodeC.tryAcquire(ELECTION, "c", Duration.ofSeconds(1))));

    LeaseRecord holder = held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));

    assertThat(holder.holder()).isEqualTo("c");
    assertThat(holder.token()).isEqualTo(FencingToken.of(1));
    assertThat(records.current(ELECTION).record().holder()).isEqualTo("c");
  }

  @Test
  void a_release_racing_with_a_takeover_gets_one_more_try() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    advance(Duration.ofSeconds(1));
    records.beforeNextWrite(() -> nodeA.release(lease));

    Lease taken = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));

    assertThat(taken.token()).isEqualTo(FencingToken.of(1));
  }

  @Test
  void a_create_that_loses_the_race_reports_the_winner() {
    records.beforeNextWrite(() -> granted(nodeC.tryAcquire(ELECTION, "c", Duration.ofSeconds(1))));

    assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1))).holder())
        .isEqualTo("c");
  }

  @Test
  void renew_keeps_the_token_and_moves_the_handle() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    advance(Duration.ofSeconds(1));

    Lease renewed = nodeA.renew(lease);

    assertThat(renewed.token()).isEqualTo(lease.token());
    assertThat(renewed.ttl()).isEqualTo(Duration.ofSeconds(2));
    assertThat(renewed.handle())
        .isNotEqualTo(lease.handle())
        .isEqualTo(records.current(ELECTION).version());
    ElectionRecord stored = records.current(ELECTION).record();
    assertThat(stored.holder()).isEqualTo("a");
    assertThat(stored.transitions()).isEqualTo(0);
    assertThat(stored.leaseDuration()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void renew_after_a_takeover_is_refused() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    advance(Duration.ofSeconds(1));
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));

    assertThatThrownBy(() -> nodeA.renew(lease))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("'billing'");
  }

  @Test
  void renew_with_the_handle_before_its_own_renewal_keeps_the_term() {
    // The first renewal's write landed, but its answer did not reach the elector (a timeout).
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));
    nodeA.renew(lease);

    Lease renewed = nodeA.renew(lease);

    assertThat(renewed.token()).isEqualTo(lease.token());
    assertThat(records.current(ELECTION).record().holder()).isEqualTo("a");
    assertThat(nodeA.renew(renewed).token()).isEqualTo(lease.token());
  }

  @Test
  void renew_of_an_older_term_of_the_same_holder_is_refused() {
    Lease old = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));
    nodeA.release(old);
    granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));

    assertThatThrownBy(() -> nodeA.renew(old)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void renew_after_the_ttl_is_refused_without_writing() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    String version = records.current(ELECTION).version();
    advance(Duration.ofSeconds(1));

    assertThatThrownBy(() -> nodeA.renew(lease))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("expired");
    assertThat(records.current(ELECTION).version()).isEqualTo(version);
  }

  @Test
  void renew_of_a_deleted_record_is_refused() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));
    records.delete(ELECTION);

    assertThatThrownBy(() -> nodeA.renew(lease)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void every_grant_has_a_higher_token_including_one_to_the_candidate_that_released_it() {
    List<Long> tokens = new ArrayList<>();
    Lease first = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    tokens.add(first.token().value());
    LeaseRecord own = held(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    assertThat(List.of(own.holder(), own.token())).containsExactly("a", first.token());
    nodeA.release(first);
    Lease again = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    tokens.add(again.token().value());
    assertThat(nodeA.renew(again).token()).isEqualTo(again.token());
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    advance(Duration.ofSeconds(1));
    Lease b = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    tokens.add(b.token().value());
    nodeB.release(b);
    tokens.add(granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1))).token().value());

    assertThat(tokens).containsExactly(0L, 1L, 2L, 3L);
  }

  @Test
  void after_the_record_is_deleted_tokens_continue_from_the_highest_seen() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    nodeA.release(lease);
    lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    assertThat(lease.token()).isEqualTo(FencingToken.of(1));
    records.delete(ELECTION);
    advance(Duration.ofSeconds(1)); // the lease it saw last runs out

    assertThat(granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1))).token())
        .isEqualTo(FencingToken.of(2));
  }

  @Test
  void read_shows_the_holder_while_live_as_this_node_observes_it() {
    assertThat(nodeB.read(ELECTION)).isEmpty();
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(3)));

    LeaseRecord shown = nodeB.read(ELECTION).orElseThrow();
    assertThat(shown.election()).isEqualTo(ELECTION);
    assertThat(shown.holder()).isEqualTo("a");
    assertThat(shown.token()).isEqualTo(lease.token());
    assertThat(shown.ttl()).isEqualTo(Duration.ofSeconds(3));
    assertThat(shown.expiresIn()).contains(Duration.ofSeconds(3));

    advance(Duration.ofSeconds(3));
    assertThat(nodeB.read(ELECTION)).isEmpty();
  }

  @Test
  void a_watcher_hears_takeovers_and_releases_but_not_renewals() {
    AtomicInteger told = new AtomicInteger();
    nodeB.watch(ELECTION, told::incrementAndGet).orElseThrow();

    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(10)));
    assertThat(told).as("the record appeared").hasValue(1);
    for (int i = 0; i < 3; i++) {
      advance(Duration.ofSeconds(1));
      lease = nodeA.renew(lease);
    }
    assertThat(told).as("renewals change nothing a follower can act on").hasValue(1);

    nodeA.release(lease);
    assertThat(told).as("released").hasValue(2);
    Lease c = granted(nodeC.tryAcquire(ELECTION, "c", Duration.ofSeconds(10)));
    assertThat(told).as("taken").hasValue(3);
    nodeC.release(c);
    granted(nodeC.tryAcquire(ELECTION, "c", Duration.ofSeconds(10)));
    assertThat(told).as("released, then a new term of the same holder").hasValue(5);
  }

  @Test
  void
      the_first_campaign_of_an_unknown_election_creates_without_reading_and_a_conflict_reads_who_holds_it() {
    granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(10)));
    assertThat(records.reads).as("reads by the first leader").isZero();
    assertThat(records.writes).as("writes by the first leader").isEqualTo(1);

    LeaseRecord holder = held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(10)));
    assertThat(holder.holder()).isEqualTo("a");
    assertThat(records.reads)
        .as("reads by the follower, after its create was refused")
        .isEqualTo(1);
    assertThat(records.writes).as("writes by both").isEqualTo(2);
  }

  @Test
  void a_watching_follower_tracks_renewals_without_reading() {
    nodeB.watch(ELECTION, () -> {}).orElseThrow();
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    int reads = records.reads;

    for (int i = 0; i < 3; i++) {
      advance(Duration.ofMillis(1500));
      lease = nodeA.renew(lease);
      assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2))).expiresIn())
          .contains(Duration.ofSeconds(2));
    }

    assertThat(records.reads).isEqualTo(reads);
  }

  @Test
  void a_watcher_is_told_when_the_lease_it_saw_last_runs_out_and_takes_it_with_one_write() {
    AtomicInteger told = new AtomicInteger();
    nodeB.watch(ELECTION, told::incrementAndGet).orElseThrow();
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    advance(Duration.ofMillis(1500));
    nodeA.renew(lease);
    told.set(0);

    advance(Duration.ofMillis(1999));
    assertThat(told).as("1999 ms after the renewal was seen").hasValue(0);
    advance(Duration.ofMillis(1));
    assertThat(told).as("2 s after the renewal was seen").hasValue(1);

    int reads = records.reads;
    int writes = records.writes;
    Lease taken = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    assertThat(taken.token()).isEqualTo(FencingToken.of(1));
    assertThat(records.reads).isEqualTo(reads);
    assertThat(records.writes).isEqualTo(writes + 1);
  }

  @Test
  void expiry_counts_from_when_the_watch_delivered_the_renewal_not_from_when_it_was_written() {
    AtomicInteger told = new AtomicInteger();
    nodeB.watch(ELECTION, told::incrementAndGet).orElseThrow();
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    advance(Duration.ofMillis(1500));
    records.holdEvents();
    nodeA.renew(lease);
    advance(Duration.ofMillis(400));
    records.deliverHeldEvents(); // the renewal reaches b 400 ms after it was written
    told.set(0);

    advance(Duration.ofMillis(1999));
    assertThat(told).hasValue(0);
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    advance(Duration.ofMillis(1));
    assertThat(told).hasValue(1);
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
  }

  @Test
  void a_follower_whose_watch_lags_is_refused_by_the_version_and_reads_who_holds_it() {
    nodeB.watch(ELECTION, () -> {}).orElseThrow();
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    records.holdEvents();
    advance(Duration.ofMillis(1500));
    nodeA.renew(lease); // b does not see it yet
    advance(Duration.ofMillis(500));
    int reads = records.reads;

    LeaseRecord holder = held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));

    assertThat(holder.holder()).isEqualTo("a");
    assertThat(holder.expiresIn())
        .as("counted from the read that showed the renewal")
        .contains(Duration.ofSeconds(2));
    assertThat(records.reads).isEqualTo(reads + 1);
    assertThat(records.current(ELECTION).record().holder()).isEqualTo("a");
  }

  @Test
  void after_the_watch_breaks_a_follower_is_told_and_reads_until_the_watch_delivers_again() {
    AtomicInteger told = new AtomicInteger();
    nodeB.watch(ELECTION, told::incrementAndGet).orElseThrow();
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));
    told.set(0);
    int reads = records.reads;

    records.breakWatches();
    assertThat(told).hasValue(1);
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(5)));
    assertThat(records.reads).isEqualTo(reads + 1);

    nodeA.renew(lease); // the watch is back and delivers
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(5)));
    assertThat(records.reads).isEqualTo(reads + 1);
  }

  @Test
  void a_deletion_the_watch_reports_is_news_and_the_next_grant_creates_without_reading() {
    AtomicInteger told = new AtomicInteger();
    nodeB.watch(ELECTION, told::incrementAndGet).orElseThrow();
    nodeA.release(granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5))));
    granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));
    told.set(0);
    int reads = records.reads;

    records.delete(ELECTION);

    assertThat(told).hasValue(1);
    advance(Duration.ofSeconds(5)); // the lease it saw last runs out (see the test below)
    assertThat(granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(5))).token())
        .isEqualTo(FencingToken.of(2));
    assertThat(records.reads).isEqualTo(reads);
  }

  @Test
  void after_a_held_record_is_deleted_a_follower_waits_out_the_lease_it_saw() {
    // Someone deletes the Lease while "a" leads; "a" leads on until its next renewal fails.
    AtomicInteger told = new AtomicInteger();
    nodeB.watch(ELECTION, told::incrementAndGet).orElseThrow();
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));
    advance(Duration.ofSeconds(2));
    records.delete(ELECTION);

    assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(5))).holder())
        .isEqualTo("a");
    assertThat(nodeB.read(ELECTION).orElseThrow().holder()).isEqualTo("a");
    assertThatThrownBy(() -> nodeA.renew(lease)).isInstanceOf(LeaseLostException.class);
    advance(Duration.ofMillis(2999));
    assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(5))).holder())
        .isEqualTo("a");
    told.set(0);
    advance(Duration.ofMillis(1));
    scheduler.runDue();

    assertThat(told).as("told when the lease it saw ran out").hasPositiveValue();
    assertThat(granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(5))).token())
        .isEqualTo(FencingToken.of(1));
  }

  @Test
  void a_new_watch_times_the_expiry_of_what_was_read_before_it() {
    granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    advance(Duration.ofSeconds(1));
    AtomicInteger told = new AtomicInteger();
    nodeB.watch(ELECTION, told::incrementAndGet).orElseThrow();

    advance(Duration.ofMillis(999));
    assertThat(told).hasValue(0);
    advance(Duration.ofMillis(1));
    assertThat(told).hasValue(1);
  }

  @Test
  void a_closed_watch_hears_nothing_more_and_leaves_no_timer_or_record_watch() {
    AtomicInteger told = new AtomicInteger();
    Subscription subscription = nodeB.watch(ELECTION, told::incrementAndGet).orElseThrow();
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    assertThat(scheduler.pending()).isEqualTo(1);

    subscription.close();
    subscription.close();
    nodeA.release(lease); // news, had b still watched
    advance(Duration.ofSeconds(5));

    assertThat(told).hasValue(1);
    assertThat(scheduler.pending()).isZero();
    assertThat(records.watchCount()).isZero();
  }

  @Test
  void without_a_record_watch_there_is_no_watch_and_no_timer() {
    records.canWatch = false;
    granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));

    assertThat(nodeB.watch(ELECTION, () -> {})).isEmpty();
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void reports_expiry_describes_and_closes_the_record_store_and_the_watches_left_open() {
    AtomicInteger told = new AtomicInteger();
    nodeA.watch(ELECTION, told::incrementAndGet).orElseThrow();
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    told.set(0);

    assertThat(nodeA.watchReportsExpiry()).isTrue();
    assertThat(nodeA.describe()).isEqualTo("cas-map");
    nodeA.close();

    assertThat(records.closed).isTrue();
    assertThat(records.watchCount()).isZero();
    assertThat(scheduler.pending()).isZero();
    advance(Duration.ofSeconds(5));
    assertThat(told).hasValue(0);
  }

  @Test
  void a_grant_whose_write_got_no_answer_is_recognised_as_its_own_on_the_next_try() {
    records.failNextWrite(); // applied, but the caller never hears of it
    assertThatThrownBy(() -> nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)))
        .isInstanceOf(LeaseStoreException.class);

    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)));

    assertThat(lease.token()).isEqualTo(FencingToken.of(1));
  }

  /**
   * One candidate id on two processes (a misconfiguration Baton must survive): the other process
   * was granted from the version this one wrote from, with the same token, and this one's write got
   * no answer. The record names this id under the remembered token, but the grant is the other
   * process's, which leads: taking it for our own would make two leaders.
   */
  @Test
  void a_grant_without_answer_is_not_mistaken_for_the_same_ids_grant_in_another_process() {
    ObservedTimeLeaseStore otherProcess =
        new ObservedTimeLeaseStore(
            records, time::nanoTime, Clock.offset(WALL, Duration.ofNanos(1_000)), scheduler);
    records.beforeNextWrite(
        () -> {
          granted(otherProcess.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)));
          records.failNextWrite(); // this process's own write loses, and its answer is lost
        });
    assertThatThrownBy(() -> nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)))
        .isInstanceOf(LeaseStoreException.class);

    LeaseRecord holder = held(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)));

    assertThat(holder.token()).isEqualTo(FencingToken.of(0));
  }

  @Test
  void a_grant_without_answer_is_given_back_on_request_and_only_once() {
    records.failNextWrite();
    assertThatThrownBy(() -> nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)))
        .isInstanceOf(LeaseStoreException.class);

    nodeA.releaseUnanswered(ELECTION, "a");

    assertThat(records.current(ELECTION).record().isReleased()).isTrue();
    Lease next = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(30)));
    int writes = records.writes;
    nodeA.releaseUnanswered(ELECTION, "a");
    assertThat(records.writes).as("nothing left to give back: no write").isEqualTo(writes);
    assertThat(records.current(ELECTION).record().holder()).isEqualTo("b");
    assertThat(next.token()).isEqualTo(FencingToken.of(1));
  }

  /** As above, the same id on two processes: the live grant is the other's, and stays. */
  @Test
  void giving_back_a_grant_without_answer_never_releases_the_same_ids_grant_in_another_process() {
    ObservedTimeLeaseStore otherProcess =
        new ObservedTimeLeaseStore(
            records, time::nanoTime, Clock.offset(WALL, Duration.ofNanos(1_000)), scheduler);
    records.beforeNextWrite(
        () -> {
          granted(otherProcess.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)));
          records.failNextWrite(); // this process's own write loses, and its answer is lost
        });
    assertThatThrownBy(() -> nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)))
        .isInstanceOf(LeaseStoreException.class);
    VersionedRecord theirs = records.current(ELECTION);

    nodeA.releaseUnanswered(ELECTION, "a");

    assertThat(records.current(ELECTION)).isEqualTo(theirs);
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(30)));
  }

  @Test
  void a_grant_without_answer_that_somebody_took_over_is_left_to_them() {
    records.failNextWrite();
    assertThatThrownBy(() -> nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(30)))
        .isInstanceOf(LeaseStoreException.class);
    held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(30)));
    advance(Duration.ofSeconds(30));
    Lease bs = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(30)));

    nodeA.releaseUnanswered(ELECTION, "a");

    assertThat(records.current(ELECTION).record().holder()).isEqualTo("b");
    assertThat(records.current(ELECTION).version()).isEqualTo(bs.handle());
  }

  /**
   * A graceful stop (close, SIGTERM) right after a grant whose write was applied but got no answer:
   * the elector never held a term, yet the record names it, and without a release the next leader
   * waits out the whole lease. The fake clock never moves here, so "at once" means before any of
   * the 30 s lease has passed.
   */
  @Test
  void an_elector_closed_after_a_grant_without_answer_gives_it_back_at_once() {
    Elector elector =
        Elector.builder(nodeA)
            .election(ELECTION)
            .candidate("a")
            .leaseDuration(Duration.ofSeconds(30))
            .renewDeadline(Duration.ofSeconds(20))
            .retryPeriod(Duration.ofSeconds(2))
            .clock(time)
            .scheduler(scheduler)
            .executor(Runnable::run)
            .ownPool(Runnable::run)
            .closeOnShutdown(false)
            .build();
    // No watch, whose going live would make the elector look again at once: it stops before that.
    records.canWatch = false;
    records.failNextWrite(); // applied, but the elector never hears of it
    elector.start();
    assertThat(records.current(ELECTION).record().holder()).isEqualTo("a");
    assertThat(elector.isLeader()).isFalse();

    elector.close();

    Lease next = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(30)));
    assertThat(next.token()).isEqualTo(FencingToken.of(1));
  }

  /**
   * As above, but the elector is closed while the grant's call is still out: the call's failure
   * comes to a stopping elector, which gives the grant back before its close returns.
   */
  @Test
  void an_elector_closed_while_its_grant_is_unanswered_gives_it_back_before_close_returns()
      throws Exception {
    ExecutorService pool = Executors.newCachedThreadPool();
    try {
      Elector elector =
          Elector.builder(nodeA)
              .election(ELECTION)
              .candidate("a")
              .leaseDuration(Duration.ofSeconds(30))
              .renewDeadline(Duration.ofSeconds(20))
              .retryPeriod(Duration.ofSeconds(2))
              .clock(time)
              .scheduler(scheduler)
              .executor(pool)
              .ownPool(pool)
              .closeOnShutdown(false)
              .build();
      records.canWatch = false;
      CountDownLatch writing = new CountDownLatch(1);
      CountDownLatch answer = new CountDownLatch(1);
      records.beforeNextWrite(
          () -> {
            writing.countDown();
            try {
              assertThat(answer.await(20, TimeUnit.SECONDS)).as("answer let go").isTrue();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IllegalStateException(e);
            }
            records.failNextWrite(); // applied, but the elector never hears of it
          });
      elector.start();
      assertThat(writing.await(20, TimeUnit.SECONDS)).as("the grant's write under way").isTrue();

      Thread closer = new Thread(elector::close, "closer");
      closer.start();
      // close() has asked the elector to stop and now waits for it: the call is still out.
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> closer.getState() == Thread.State.TIMED_WAITING);
      answer.countDown();
      closer.join(Duration.ofSeconds(20).toMillis());

      assertThat(closer.isAlive()).as("close() returned").isFalse();
      assertThat(records.current(ELECTION).record().isReleased())
          .as("released before close() returned: %s", records.current(ELECTION))
          .isTrue();
      granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(30)));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void refuses_a_ttl_that_is_not_positive_and_an_empty_candidate() {
    assertThatThrownBy(() -> nodeA.tryAcquire(ELECTION, "a", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl must be positive");
    assertThatThrownBy(() -> nodeA.tryAcquire(ELECTION, "", Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("candidate");
  }

  /**
   * A compare-and-set map with a version counter: the smallest honest {@link RecordStore}. Its
   * watches deliver each change as it is written, or, while held, when the test says.
   */
  @Test
  void a_leaders_lease_watch_ignores_its_own_renewals_without_reading_and_hears_a_deletion() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    AtomicInteger lost = new AtomicInteger();
    Subscription watch = nodeA.watchLease(lease, lost::incrementAndGet).orElseThrow();
    int reads = records.reads;

    for (int i = 0; i < 3; i++) {
      advance(Duration.ofMillis(500));
      lease = nodeA.renew(lease);
    }
    assertThat(lost).as("told after the leader's own renewals").hasValue(0);
    assertThat(records.reads).as("reads for the lease watch").isEqualTo(reads);

    records.delete(ELECTION);
    assertThat(lost).as("told after the record was deleted").hasValue(1);

    watch.close();
    assertThat(records.watchCount()).isZero();
  }

  @Test
  void a_leaders_lease_watch_hears_a_release_behind_its_back_and_a_takeover_once() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    AtomicInteger lost = new AtomicInteger();
    nodeA.watchLease(lease, lost::incrementAndGet).orElseThrow();

    nodeC.release(lease); // an operator's tool with the lease's handle
    assertThat(lost).hasValue(1);
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    assertThat(lost).as("told once only").hasValue(1);
  }

  @Test
  void a_leaders_lease_watch_opened_after_a_takeover_hears_it_from_the_first_delivery() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    nodeC.release(lease);
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    AtomicInteger lost = new AtomicInteger();

    nodeA.watchLease(lease, lost::incrementAndGet).orElseThrow();

    assertThat(lost).hasValue(1);
  }

  @Test
  void a_broken_watch_is_no_loss_and_a_store_that_cannot_watch_offers_no_lease_watch() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    AtomicInteger lost = new AtomicInteger();
    nodeA.watchLease(lease, lost::incrementAndGet).orElseThrow();

    records.breakWatches();
    assertThat(lost).hasValue(0);

    records.canWatch = false;
    assertThat(nodeA.watchLease(lease, lost::incrementAndGet)).isEmpty();
  }

  private static final class CasRecords implements RecordStore {
    private final Map<String, VersionedRecord> byElection = new HashMap<>();
    private final Map<String, List<RecordWatcher>> watchers = new HashMap<>();
    private final List<Runnable> heldEvents = new ArrayList<>();
    private long lastVersion;
    private Runnable beforeNextWrite;
    private boolean failNextWrite;
    private boolean holding;
    boolean canWatch = true;
    int reads;
    int writes;
    boolean closed;

    /** Runs {@code competitor} just before the next write lands, as a concurrent writer would. */
    void beforeNextWrite(Runnable competitor) {
      beforeNextWrite = competitor;
    }

    /**
     * The next write applies but throws as a call whose answer never came: the caller cannot know
     * whether it landed.
     */
    void failNextWrite() {
      failNextWrite = true;
    }

    /** Keeps watch events back until {@link #deliverHeldEvents}, as a lagging watch would. */
    synchronized void holdEvents() {
      holding = true;
    }

    void deliverHeldEvents() {
      List<Runnable> events;
      synchronized (this) {
        holding = false;
        events = new ArrayList<>(heldEvents);
        heldEvents.clear();
      }
      events.forEach(Runnable::run);
    }

    /** Every watch breaks, as when the connection to the server drops. */
    void breakWatches() {
      List<RecordWatcher> all;
      synchronized (this) {
        all = watchers.values().stream().flatMap(List::stream).toList();
      }
      all.forEach(RecordWatcher::lost);
    }

    synchronized int watchCount() {
      return watchers.values().stream().mapToInt(List::size).sum();
    }

    synchronized VersionedRecord current(String election) {
      return byElection.get(election);
    }

    synchronized void put(String election, ElectionRecord record) {
      byElection.put(election, new VersionedRecord(record, Long.toString(++lastVersion)));
    }

    void delete(String election) {
      synchronized (this) {
        byElection.remove(election);
      }
      publish(election, Optional.empty());
    }

    @Override
    public synchronized Optional<VersionedRecord> read(String election) {
      reads++;
      return Optional.ofNullable(byElection.get(election));
    }

    @Override
    public Optional<VersionedRecord> create(String election, ElectionRecord record) {
      competeFirst();
      synchronized (this) {
        writes++;
        if (byElection.containsKey(election)) {
          return answered(election, Optional.empty());
        }
        put(election, record);
      }
      return answered(election, written(election));
    }

    @Override
    public Optional<VersionedRecord> replace(
        String election, String expectedVersion, ElectionRecord record) {
      competeFirst();
      synchronized (this) {
        writes++;
        VersionedRecord existing = byElection.get(election);
        if (existing == null || !existing.version().equals(expectedVersion)) {
          return answered(election, Optional.empty());
        }
        put(election, record);
      }
      return answered(election, written(election));
    }

    /**
     * The write's answer, or none when the test said so (what the write did stands all the same).
     */
    private Optional<VersionedRecord> answered(String election, Optional<VersionedRecord> written) {
      if (failNextWrite) {
        failNextWrite = false;
        throw new LeaseStoreException(election, "no answer within the call timeout");
      }
      return written;
    }

    private void competeFirst() {
      Runnable competitor = beforeNextWrite;
      beforeNextWrite = null;
      if (competitor != null) {
        competitor.run();
      }
    }

    private Optional<VersionedRecord> written(String election) {
      VersionedRecord now = current(election);
      publish(election, Optional.of(now));
      return Optional.of(now);
    }

    private void publish(String election, Optional<VersionedRecord> record) {
      List<RecordWatcher> toCall;
      synchronized (this) {
        toCall = new ArrayList<>(watchers.getOrDefault(election, List.of()));
        if (holding) {
          toCall.forEach(w -> heldEvents.add(() -> w.seen(record)));
          return;
        }
      }
      toCall.forEach(w -> w.seen(record));
    }

    @Override
    public Optional<Subscription> watch(String election, RecordWatcher watcher) {
      if (!canWatch) {
        return Optional.empty();
      }
      Optional<VersionedRecord> now;
      synchronized (this) {
        watchers.computeIfAbsent(election, k -> new ArrayList<>()).add(watcher);
        now = Optional.ofNullable(byElection.get(election));
      }
      now.ifPresent(
          r -> watcher.seen(Optional.of(r))); // a new watch reports the record as it is, as ADDED
      return Optional.of(
          () -> {
            synchronized (this) {
              watchers.get(election).remove(watcher);
            }
          });
    }

    @Override
    public String describe() {
      return "cas-map";
    }

    @Override
    public void close() {
      closed = true;
    }
  }
}
