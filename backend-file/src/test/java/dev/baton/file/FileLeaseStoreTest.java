package dev.baton.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the store does with its files, on a clock the test moves by hand. */
class FileLeaseStoreTest {

  private static final Duration TTL = Duration.ofSeconds(3);

  @TempDir Path dir;
  private final AtomicLong now = new AtomicLong(TimeUnit.HOURS.toNanos(1));

  private FileLeaseStore store() {
    return FileLeaseStore.builder(dir).clock(now::get).build();
  }

  private void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  private List<String> files(String election) throws IOException {
    try (Stream<Path> s = Files.list(dir.resolve(election))) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void a_grant_is_the_next_version_and_its_number_is_the_token() throws IOException {
    FileLeaseStore a = store();
    Lease first = a.tryAcquire("e", "a", TTL).lease().orElseThrow();
    a.renew(first);
    a.release(first);
    Lease second = a.tryAcquire("e", "b", TTL).lease().orElseThrow();

    assertThat(first.token().value()).isEqualTo(1);
    assertThat(second.token().value()).isEqualTo(4);
    assertThat(files("e"))
        .containsExactly(
            "000000000001.lease", "000000000002.lease", "000000000003.lease", "000000000004.lease");
  }

  @Test
  void another_candidate_is_refused_until_the_lease_ran_out_on_the_shared_clock() {
    FileLeaseStore a = store();
    FileLeaseStore b = store();
    a.tryAcquire("e", "a", TTL).lease().orElseThrow();

    advance(TTL.minusMillis(1));
    assertThat(b.tryAcquire("e", "b", TTL).holder()).map(r -> r.holder()).contains("a");
    advance(Duration.ofMillis(1));
    assertThat(b.tryAcquire("e", "b", TTL).isGranted()).isTrue();
  }

  @Test
  void a_renewal_after_expiry_or_takeover_is_lost() {
    FileLeaseStore a = store();
    FileLeaseStore b = store();
    Lease lease = a.tryAcquire("e", "a", TTL).lease().orElseThrow();
    advance(TTL);
    assertThatThrownBy(() -> a.renew(lease))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("expired");

    b.tryAcquire("e", "b", TTL).lease().orElseThrow();
    assertThatThrownBy(() -> a.renew(lease))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("'b' holds it now");
    a.release(lease);
    assertThat(a.read("e")).map(r -> r.holder()).contains("b");
  }

  @Test
  void a_new_store_on_the_directory_continues_the_tokens() {
    Lease before = store().tryAcquire("e", "a", TTL).lease().orElseThrow();
    advance(TTL);

    Lease after = store().tryAcquire("e", "a", TTL).lease().orElseThrow();
    assertThat(after.token()).isGreaterThan(before.token());
  }

  @Test
  void old_versions_and_temporary_files_of_dead_processes_are_deleted_but_never_the_head()
      throws IOException, InterruptedException {
    FileLeaseStore a = store();
    Lease lease = a.tryAcquire("e", "a", Duration.ofMinutes(1)).lease().orElseThrow();
    Process dead = new ProcessBuilder("true").start();
    dead.waitFor();
    Files.write(dir.resolve("e").resolve(".tmp-" + dead.pid() + "-1-1"), new byte[0]);
    for (int i = 0; i < 5; i++) {
      advance(Duration.ofSeconds(1));
      lease = a.renew(lease);
    }
    assertThat(files("e")).hasSize(7);

    // Deleted: what was below the highest version seen at least PRUNE_AFTER before (7, seen at the
    // first write that long after the grant).
    advance(Duration.ofNanos(ElectionDirectory.PRUNE_AFTER));
    a.renew(lease);
    advance(Duration.ofNanos(ElectionDirectory.PRUNE_AFTER));
    a.renew(lease);

    assertThat(files("e")).containsExactly(ElectionDirectory.name(7), ElectionDirectory.name(8));
    assertThat(a.read("e")).map(r -> r.token().value()).contains(1L);
  }

  @Test
  void a_write_completed_later_than_the_call_timeout_after_its_read_is_not_trusted() {
    // Every reading of the clock is 600 ms after the last: read, decide and write span more than 1
    // s.
    FileLeaseStore slow =
        FileLeaseStore.builder(dir)
            .clock(() -> now.addAndGet(TimeUnit.MILLISECONDS.toNanos(600)))
            .build();

    assertThatThrownBy(() -> slow.tryAcquire("e", "a", TTL))
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining("more than the call timeout (1000ms); whether it applied is unknown");
  }

  @Test
  void a_head_it_cannot_read_is_an_error_naming_the_file() throws IOException {
    Files.createDirectories(dir.resolve("e"));
    Files.writeString(dir.resolve("e").resolve(ElectionDirectory.name(3)), "not a lease");

    assertThatThrownBy(() -> store().read("e"))
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining(ElectionDirectory.name(3))
        .hasMessageContaining("not a lease version this store wrote");
  }

  @Test
  void election_names_must_be_plain_file_names() {
    FileLeaseStore a = store();
    for (String bad : List.of("", "..", ".hidden", "a/b", "-x", "a".repeat(201))) {
      assertThatThrownBy(() -> a.checkElectionName(bad))
          .as("'%s'", bad)
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("'" + bad + "'");
    }
    a.checkElectionName("billing-cron.v2_1");
  }

  @Test
  void a_closed_store_refuses_calls() {
    FileLeaseStore a = store();
    a.close();
    assertThatThrownBy(() -> a.read("e"))
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void the_builder_refuses_a_call_timeout_out_of_range_naming_it() {
    assertThatThrownBy(() -> FileLeaseStore.builder(dir).callTimeout(Duration.ZERO))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("callTimeout")
        .hasMessageContaining("0ms");
    assertThatThrownBy(() -> FileLeaseStore.builder(dir).callTimeout(Duration.ofSeconds(6)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("6000ms")
        .hasMessageContaining("at most 5s");
  }

  @Test
  void the_builder_refuses_a_directory_it_cannot_create() throws IOException {
    Path file = Files.writeString(dir.resolve("plain-file"), "x");

    assertThatThrownBy(() -> FileLeaseStore.builder(file.resolve("leases")).build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("directory '" + file.resolve("leases") + "'");
  }

  @Test
  void network_and_fuse_file_systems_are_refused_local_ones_accepted() {
    for (String type :
        List.of("nfs", "nfs4", "cifs", "smb3", "9p", "ceph", "virtiofs", "fuse.sshfs", "fuse")) {
      assertThat(FileLeaseStore.unsafeFileSystem(type))
          .as(type)
          .hasValueSatisfying(why -> assertThat(why).contains(type));
    }
    for (String type : List.of("ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs")) {
      assertThat(FileLeaseStore.unsafeFileSystem(type)).as(type).isEmpty();
    }
  }
}
