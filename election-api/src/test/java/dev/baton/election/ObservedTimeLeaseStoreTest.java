package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The observed-time rules on a fake clock. Each "node" is its own {@link ObservedTimeLeaseStore}
 * with its own monotonic clock (offset from the others, as on different machines), all sharing one
 * compare-and-set record map, as processes share a Kubernetes API server.
 */
class ObservedTimeLeaseStoreTest {

  private static final String ELECTION = "billing";
  private static final Clock WALL = Clock.fixed(Instant.parse("2026-11-22T10:00:00Z"), ZoneOffset.UTC);

  private final AtomicLong elapsedNanos = new AtomicLong();
  private final CasRecords records = new CasRecords();
  private final ObservedTimeLeaseStore nodeA = node(0);
  private final ObservedTimeLeaseStore nodeB = node(987_654_321_000L);
  private final ObservedTimeLeaseStore nodeC = node(-42_000_000_000L);

  private ObservedTimeLeaseStore node(long clockOffsetNanos) {
    return new ObservedTimeLeaseStore(records, () -> elapsedNanos.get() + clockOffsetNanos, WALL);
  }

  private void advance(Duration d) {
    elapsedNanos.addAndGet(d.toNanos());
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
    assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2))).expiresIn()).contains(Duration.ofMillis(1));

    advance(Duration.ofMillis(1));
    Lease lease = granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2)));
    assertThat(lease.token()).isEqualTo(FencingToken.of(1));
  }

  @Test
  void honours_the_lease_duration_a_client_go_holder_wrote_not_the_local_ttl() {
    records.put(ELECTION, new ElectionRecord("client-go-pod", Duration.ofSeconds(7), WALL.instant(), WALL.instant(), 3));

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
    assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(2))).expiresIn()).contains(Duration.ofSeconds(1));

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
    assertThat(granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(10))).token()).isEqualTo(FencingToken.of(1));
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

    assertThat(held(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1))).holder()).isEqualTo("c");
  }

  @Test
  void renew_keeps_the_token_and_moves_the_handle() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(2)));
    advance(Duration.ofSeconds(1));

    Lease renewed = nodeA.renew(lease);

    assertThat(renewed.token()).isEqualTo(lease.token());
    assertThat(renewed.ttl()).isEqualTo(Duration.ofSeconds(2));
    assertThat(renewed.handle()).isNotEqualTo(lease.handle()).isEqualTo(records.current(ELECTION).version());
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

    assertThatThrownBy(() -> nodeA.renew(lease)).isInstanceOf(LeaseLostException.class).hasMessageContaining("'billing'");
  }

  @Test
  void renew_with_a_stale_handle_is_refused() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));
    nodeA.renew(lease);

    assertThatThrownBy(() -> nodeA.renew(lease)).isInstanceOf(LeaseLostException.class);
    assertThat(records.current(ELECTION).record().holder()).isEqualTo("a");
  }

  @Test
  void renew_after_the_ttl_is_refused_without_writing() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    String version = records.current(ELECTION).version();
    advance(Duration.ofSeconds(1));

    assertThatThrownBy(() -> nodeA.renew(lease)).isInstanceOf(LeaseLostException.class).hasMessageContaining("expired");
    assertThat(records.current(ELECTION).version()).isEqualTo(version);
  }

  @Test
  void renew_of_a_deleted_record_is_refused() {
    Lease lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(5)));
    records.delete(ELECTION);

    assertThatThrownBy(() -> nodeA.renew(lease)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void every_grant_has_a_higher_token_including_a_regrant_to_the_same_candidate() {
    List<Long> tokens = new ArrayList<>();
    Lease first = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    tokens.add(first.token().value());
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
    lease = granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1)));
    assertThat(lease.token()).isEqualTo(FencingToken.of(1));
    records.delete(ELECTION);

    assertThat(granted(nodeA.tryAcquire(ELECTION, "a", Duration.ofSeconds(1))).token()).isEqualTo(FencingToken.of(2));
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
  void watch_describe_and_close_go_to_the_record_store() {
    AtomicInteger calls = new AtomicInteger();
    Subscription subscription = nodeA.watch(ELECTION, calls::incrementAndGet).orElseThrow();
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));
    subscription.close();
    granted(nodeB.tryAcquire(ELECTION, "b", Duration.ofSeconds(1)));

    assertThat(calls).hasValue(1);
    assertThat(nodeA.watchReportsExpiry()).isFalse();
    assertThat(nodeA.describe()).isEqualTo("cas-map");
    nodeA.close();
    assertThat(records.closed).isTrue();
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

  /** A compare-and-set map with a version counter: the smallest honest {@link RecordStore}. */
  private static final class CasRecords implements RecordStore {
    private final Map<String, VersionedRecord> byElection = new HashMap<>();
    private final Map<String, List<Runnable>> watchers = new HashMap<>();
    private long lastVersion;
    private Runnable beforeNextWrite;
    boolean closed;

    /** Runs {@code competitor} just before the next write lands, as a concurrent writer would. */
    void beforeNextWrite(Runnable competitor) {
      beforeNextWrite = competitor;
    }

    synchronized VersionedRecord current(String election) {
      return byElection.get(election);
    }

    synchronized void put(String election, ElectionRecord record) {
      byElection.put(election, new VersionedRecord(record, Long.toString(++lastVersion)));
    }

    synchronized void delete(String election) {
      byElection.remove(election);
    }

    @Override
    public synchronized Optional<VersionedRecord> read(String election) {
      return Optional.ofNullable(byElection.get(election));
    }

    @Override
    public Optional<VersionedRecord> create(String election, ElectionRecord record) {
      competeFirst();
      synchronized (this) {
        if (byElection.containsKey(election)) {
          return Optional.empty();
        }
        put(election, record);
      }
      return written(election);
    }

    @Override
    public Optional<VersionedRecord> replace(String election, String expectedVersion, ElectionRecord record) {
      competeFirst();
      synchronized (this) {
        VersionedRecord existing = byElection.get(election);
        if (existing == null || !existing.version().equals(expectedVersion)) {
          return Optional.empty();
        }
        put(election, record);
      }
      return written(election);
    }

    private void competeFirst() {
      Runnable competitor = beforeNextWrite;
      beforeNextWrite = null;
      if (competitor != null) {
        competitor.run();
      }
    }

    private Optional<VersionedRecord> written(String election) {
      List<Runnable> toCall;
      VersionedRecord now;
      synchronized (this) {
        now = byElection.get(election);
        toCall = new ArrayList<>(watchers.getOrDefault(election, List.of()));
      }
      toCall.forEach(Runnable::run);
      return Optional.of(now);
    }

    @Override
    public synchronized Optional<Subscription> watch(String election, Runnable changed) {
      watchers.computeIfAbsent(election, k -> new ArrayList<>()).add(changed);
      return Optional.of(
          () -> {
            synchronized (this) {
              watchers.get(election).remove(changed);
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
