package dev.baton.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStoreException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the store does when its directory is deleted, restored from an older copy, or holds a
 * version of another boot while candidates run: tokens never repeat nor go backwards, nobody is
 * granted over a lease that may still be live, and no cleanup deletes a grant. Each store is a
 * process of its own as far as the files go; they share one clock the test moves by hand.
 */
class FileLeaseStoreResetTest {

  private static final String E = "e";
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration STEP = Duration.ofMillis(500);

  @TempDir Path dir;
  private final AtomicLong now = new AtomicLong(TimeUnit.HOURS.toNanos(1));
  private final List<Grant> grants = new ArrayList<>();

  /** A term as its holder knows it: from the grant until the end of its last renewal. */
  private record Grant(String holder, long token, long from, long until) {}

  private FileLeaseStore store() {
    return FileLeaseStore.builder(dir).clock(now::get).build();
  }

  private void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  private Path election() {
    return dir.resolve(E);
  }

  /** {@code git clean -xdf}, {@code rm -rf}, a cleanup job. */
  private void deleteElection() throws IOException {
    try (Stream<Path> files = Files.walk(election())) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private Path backup() throws IOException {
    Path copy = Files.createDirectories(dir.getParent().resolve(dir.getFileName() + "-backup"));
    try (Stream<Path> files = Files.list(election())) {
      for (Path p : files.toList()) {
        Files.copy(p, copy.resolve(p.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
      }
    }
    return copy;
  }

  private void restore(Path copy) throws IOException {
    deleteElection();
    Files.createDirectories(election());
    try (Stream<Path> files = Files.list(copy)) {
      for (Path p : files.toList()) {
        Files.copy(p, election().resolve(p.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
      }
    }
  }

  /**
   * One try; the grant, if any, checked against every earlier one: a token higher than all, and no
   * earlier term still live. A refusal must say that the directory went back.
   */
  private Optional<Lease> attempt(FileLeaseStore store, String candidate) {
    return attempt(store, candidate, true);
  }

  private Optional<Lease> attempt(FileLeaseStore store, String candidate, boolean check) {
    long start = now.get();
    Acquisition a;
    try {
      a = store.tryAcquire(E, candidate, TTL);
    } catch (LeaseStoreException e) {
      assertThat(e).hasMessageContaining("went back");
      return Optional.empty();
    }
    if (check) {
      a.lease().ifPresent(lease -> granted(lease, start));
    }
    return a.lease();
  }

  private void granted(Lease lease, long start) {
    for (Grant g : grants) {
      assertThat(lease.token().value())
          .as("token granted to '%s' after %s", lease.candidate(), g)
          .isGreaterThan(g.token());
      if (!g.holder().equals(lease.candidate())) {
        assertThat(start)
            .as(
                "'%s' granted token %d %d ms before the end of %s",
                lease.candidate(),
                lease.token().value(),
                TimeUnit.NANOSECONDS.toMillis(g.until() - start),
                g)
            .isGreaterThanOrEqualTo(g.until());
      }
    }
    grants.add(new Grant(lease.candidate(), lease.token().value(), start, start + TTL.toNanos()));
  }

  private Lease renew(FileLeaseStore store, Lease lease) {
    long start = now.get();
    Lease renewed = store.renew(lease);
    Grant last = grants.get(grants.size() - 1);
    assertThat(last.token()).isEqualTo(lease.token().value());
    grants.set(
        grants.size() - 1,
        new Grant(last.holder(), last.token(), last.from(), start + TTL.toNanos()));
    return renewed;
  }

  private void release(FileLeaseStore store, Lease lease) {
    long start = now.get();
    store.release(lease);
    for (int i = 0; i < grants.size(); i++) {
      Grant g = grants.get(i);
      if (g.token() == lease.token().value()) {
        grants.set(i, new Grant(g.holder(), g.token(), g.from(), Math.min(g.until(), start)));
      }
    }
  }

  /**
   * Two leases' time of the holder renewing every third of its lease and the follower trying every
   * step, as elect does; the follower must not be granted.
   */
  private Lease renewWhileRefused(
      FileLeaseStore holder, Lease held, FileLeaseStore follower, String candidate) {
    for (int i = 0; i < 12; i++) {
      advance(STEP);
      assertThat(attempt(follower, candidate)).as("step %d", i).isEmpty();
      if (i % 2 == 1) {
        held = renew(holder, held);
      }
    }
    return held;
  }

  /** Tries every {@link #STEP} until granted; a minute of the test's clock at most. */
  private Lease awaitGrant(FileLeaseStore store, String candidate) {
    return awaitGrant(store, candidate, true);
  }

  private Lease awaitGrant(FileLeaseStore store, String candidate, boolean check) {
    for (int i = 0; i < 120; i++) {
      Optional<Lease> lease = attempt(store, candidate, check);
      if (lease.isPresent()) {
        return lease.get();
      }
      advance(STEP);
    }
    return fail("'%s' was not granted within a minute", candidate);
  }

  @Test
  void deleting_the_directory_twice_under_a_holder_and_a_follower_repeats_no_token()
      throws IOException {
    FileLeaseStore a = store();
    FileLeaseStore b = store();
    Lease held = attempt(a, "a").orElseThrow();
    advance(STEP);
    assertThat(attempt(b, "b")).isEmpty();

    for (int round = 0; round < 2; round++) {
      deleteElection();
      held = renewWhileRefused(a, held, b, "b");
    }
    release(a, held);
    Lease next = awaitGrant(b, "b");

    assertThat(next.token().value()).isGreaterThan(held.token().value());
    assertThat(store().read(E)).map(r -> r.token()).contains(next.token());
  }

  @Test
  void deleting_the_directory_under_a_holder_that_stopped_renewing_waits_for_its_lease()
      throws IOException {
    FileLeaseStore a = store();
    FileLeaseStore b = store();
    Lease held = attempt(a, "a").orElseThrow();
    for (int i = 0; i < 4; i++) {
      advance(STEP);
      held = renew(a, held);
      assertThat(attempt(b, "b")).isEmpty();
    }
    deleteElection();

    // a is paused (or killed): b learns of no live lease from the directory, only from what it saw.
    Lease next = awaitGrant(b, "b");
    assertThat(next.token().value()).isGreaterThan(held.token().value());
  }

  @Test
  void a_grant_the_follower_never_saw_is_not_granted_again_after_the_directory_is_deleted()
      throws IOException {
    FileLeaseStore a = store();
    FileLeaseStore b = store();
    FileLeaseStore x = store();
    release(a, attempt(a, "a").orElseThrow());
    advance(STEP);
    assertThat(b.read(E)).as("b saw the lease free").isEmpty();
    advance(STEP);
    Lease unseen = attempt(x, "x").orElseThrow();

    deleteElection();
    // b remembers a free lease; x's grant is in no file and in nothing b saw.
    unseen = renewWhileRefused(x, unseen, b, "b");
    release(x, unseen);
    Lease next = awaitGrant(b, "b");

    assertThat(next.token().value()).isGreaterThan(unseen.token().value());
  }

  @Test
  void a_candidate_that_saw_the_very_version_another_wrote_back_grants_nothing_over_the_lost_one()
      throws IOException {
    FileLeaseStore a = store();
    FileLeaseStore b = store();
    FileLeaseStore c = store();
    release(a, attempt(a, "a").orElseThrow());
    advance(STEP);
    assertThat(b.read(E)).as("b saw the lease free").isEmpty();
    assertThat(c.read(E)).as("c saw the lease free").isEmpty();

    // For b, which remembers the version c writes back byte for byte, the directory looks as b
    // left it.
    aGrantNobodyElseSawOutlivesTheWriteBackBy(c, () -> b, "b");
  }

  @Test
  void
      a_candidate_that_saw_less_than_the_version_another_wrote_back_grants_nothing_over_the_lost_one()
          throws IOException {
    FileLeaseStore a = store();
    FileLeaseStore b = store();
    FileLeaseStore c = store();
    Lease first = attempt(a, "a").orElseThrow();
    advance(STEP);
    assertThat(b.read(E)).as("b saw a's lease").isPresent();
    release(a, first);
    assertThat(c.read(E)).as("c saw the lease free").isEmpty();

    // The version c writes back is above anything b saw: for b the directory moved on.
    aGrantNobodyElseSawOutlivesTheWriteBackBy(c, () -> b, "b");
  }

  @Test
  void a_candidate_started_after_a_version_was_written_back_grants_nothing_for_a_lease()
      throws IOException {
    FileLeaseStore a = store();
    FileLeaseStore c = store();
    release(a, attempt(a, "a").orElseThrow());
    assertThat(c.read(E)).as("c saw the lease free").isEmpty();

    // Started after the write-back, the newcomer knows only what the files say.
    aGrantNobodyElseSawOutlivesTheWriteBackBy(c, this::store, "n");
  }

  /**
   * x is granted a lease nobody else sees, the directory is deleted, and {@code writer} writes back
   * the free version it saw; then the follower ({@code follower} is asked for it after the
   * write-back) is refused while x renews, and granted above x's token once x released.
   */
  private void aGrantNobodyElseSawOutlivesTheWriteBackBy(
      FileLeaseStore writer, Supplier<FileLeaseStore> follower, String candidate)
      throws IOException {
    FileLeaseStore x = store();
    advance(STEP);
    Lease unseen = attempt(x, "x").orElseThrow();
    deleteElection();
    assertThat(attempt(writer, "writer")).isEmpty();

    FileLeaseStore f = follower.get();
    unseen = renewWhileRefused(x, unseen, f, candidate);
    release(x, unseen);
    Lease next = awaitGrant(f, candidate);

    assertThat(next.token().value()).isGreaterThan(unseen.token().value());
  }

  @Test
  void a_version_a_writer_found_taken_is_not_granted_again_when_rm_deletes_it_before_older_ones()
      throws IOException {
    FileLeaseStore a = store();
    release(a, attempt(a, "a").orElseThrow());
    // x's clock is read after x has read the head (version 2, free) and again after x found the
    // next number taken: a takes version 3 in between, and rm -rf, which unlinks in the order
    // readdir gives (hash order on ext4), has deleted version 3 but not yet version 2.
    FileLeaseStore x =
        storeReadingItsClockAfter(
            List.of(() -> {}, () -> {}, () -> takenByA(a, 0), () -> deleteVersion(3)));

    assertThat(attempt(x, "x")).as("x, which found version 3 taken").isEmpty();
    aKeepsItsLeaseAndXIsGrantedAboveIt(a, x);
  }

  @Test
  void a_lease_linked_where_rm_deleted_a_version_under_a_newer_one_is_not_granted()
      throws IOException {
    FileLeaseStore a = store();
    release(a, attempt(a, "a").orElseThrow());
    // After x read version 2 (free) and before its link: a takes version 3 and renews it (4), and
    // rm -rf has deleted version 3 but not yet 4 or 2. x's link of 3 succeeds.
    FileLeaseStore x =
        storeReadingItsClockAfter(
            List.of(
                () -> {},
                () -> {},
                () -> {
                  takenByA(a, 1);
                  deleteVersion(3);
                }));

    assertThat(attempt(x, "x")).as("x, whose version 3 is under a's 4").isEmpty();
    aKeepsItsLeaseAndXIsGrantedAboveIt(a, x);
  }

  private final List<Lease> taken = new ArrayList<>();

  /** a renews the lease it was granted while x is refused, then releases it; then x is granted. */
  private void aKeepsItsLeaseAndXIsGrantedAboveIt(FileLeaseStore a, FileLeaseStore x) {
    Lease held = renewWhileRefused(a, taken.get(0), x, "x");
    release(a, held);
    Lease next = awaitGrant(x, "x");

    assertThat(next.token().value()).isGreaterThan(held.token().value());
  }

  /** a is granted, and renews {@code renewals} times. */
  private void takenByA(FileLeaseStore a, int renewals) {
    Lease lease = attempt(a, "a").orElseThrow();
    for (int i = 0; i < renewals; i++) {
      lease = renew(a, lease);
    }
    taken.add(lease);
  }

  /**
   * A store whose clock runs {@code actions}, one per reading, before it answers: what other
   * processes do between two steps of this one's call. The test fails unless all of them ran.
   */
  private FileLeaseStore storeReadingItsClockAfter(List<Runnable> actions) {
    List<Runnable> pending = new ArrayList<>(actions);
    pendingActions.add(pending);
    return FileLeaseStore.builder(dir)
        .clock(
            () -> {
              if (!pending.isEmpty()) {
                pending.remove(0).run();
              }
              return now.get();
            })
        .build();
  }

  private final List<List<Runnable>> pendingActions = new ArrayList<>();

  @AfterEach
  void everyInterleavingRan() {
    assertThat(pendingActions).as("actions that did not run").allMatch(List::isEmpty);
  }

  private void deleteVersion(long number) {
    try {
      Files.delete(election().resolve(ElectionDirectory.name(number)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void restoring_an_older_copy_of_the_directory_grants_no_old_token_and_nothing_over_a_live_lease()
      throws IOException {
    FileLeaseStore a = store();
    FileLeaseStore b = store();
    Lease first = attempt(a, "a").orElseThrow();
    advance(STEP);
    first = renew(a, first);
    Path copy = backup();
    release(a, first);
    advance(STEP);
    Lease second = attempt(b, "b").orElseThrow();
    advance(TTL.minus(STEP));
    second = renew(b, second);

    restore(copy);
    // a's lease in the copy has run out; b's, which the copy does not know, has not.
    assertThat(attempt(a, "a")).isEmpty();
    advance(STEP);
    renew(b, second);
    assertThat(attempt(a, "a")).isEmpty();
    release(b, second);
    Lease third = awaitGrant(a, "a");

    assertThat(third.token().value()).isGreaterThan(second.token().value());
  }

  @Test
  void a_version_of_another_boot_is_live_for_its_ttl_from_when_this_process_first_saw_it()
      throws IOException {
    Files.createDirectories(election());
    LeaseVersion otherBoot =
        LeaseVersion.held(
            7, "a", TTL, now.get() - TimeUnit.HOURS.toNanos(10), "another-boot", Instant.now());
    Files.write(election().resolve(ElectionDirectory.name(9)), otherBoot.encode());
    FileLeaseStore b = store();

    assertThat(b.read(E)).map(r -> r.holder()).contains("a");
    advance(TTL.minusMillis(1));
    assertThat(b.tryAcquire(E, "b", TTL).holder()).map(r -> r.holder()).contains("a");
    advance(Duration.ofMillis(1));
    assertThat(b.tryAcquire(E, "b", TTL).lease().orElseThrow().token().value()).isEqualTo(10);
  }

  @Test
  void a_version_of_another_boot_that_keeps_being_renewed_is_never_taken() throws IOException {
    Files.createDirectories(election());
    FileLeaseStore b = store();
    for (int v = 1; v <= 10; v++) {
      LeaseVersion otherHost =
          LeaseVersion.held(1, "a", TTL, v * 1_000_000L, "another-boot", Instant.now());
      Files.write(election().resolve(ElectionDirectory.name(v)), otherHost.encode());
      assertThat(b.tryAcquire(E, "b", TTL).holder()).as("version %d", v).isPresent();
      advance(TTL.minus(STEP));
    }
  }

  @Test
  void cleanup_with_a_mark_from_before_the_directory_was_deleted_deletes_no_grant()
      throws IOException {
    FileLeaseStore a = store();
    // Terms PRUNE_AFTER apart: a's cleanup now may delete everything below version 5.
    for (int i = 0; i < 3; i++) {
      release(a, attempt(a, "a").orElseThrow());
      advance(Duration.ofNanos(ElectionDirectory.PRUNE_AFTER));
    }

    deleteElection();
    // A candidate started after the deletion cannot tell: for it the directory is new.
    FileLeaseStore fresh = store();
    Lease c = fresh.tryAcquire(E, "c", TTL).lease().orElseThrow();
    fresh.release(c);
    // Not checked at the grant, to see what a's cleanup does with it.
    Lease mine = awaitGrant(a, "a", false);

    assertThat(election().resolve(ElectionDirectory.name(mine.token().value())))
        .as("the version that granted a's lease, after a's cleanup")
        .exists();
    assertThat(store().read(E))
        .map(r -> r.holder() + " " + r.token())
        .contains("a " + mine.token());
    assertThat(mine.token().value()).as("a's token after its earlier ones").isGreaterThan(5);
    assertThatThrownBy(() -> fresh.renew(c)).hasMessageContaining("lost");
  }
}
