package dev.baton.file;

import static java.util.Objects.requireNonNull;

import dev.baton.election.Acquisition;
import dev.baton.election.ConfigurationException;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A {@link LeaseStore} in a directory of the local file system, for candidates on one host: no
 * server, nothing that any candidate hosts for the others, so a candidate that is paused or killed
 * delays nobody beyond its own lease.
 *
 * <p>Each election is a sub-directory of numbered version files; the highest is the election's
 * state. Every change (grant, renewal, release) creates the next number exclusively, whole and
 * synced, so it is a compare-and-set on the version read, and a grant's number is its fencing
 * token: it is higher than every number before it, also across crashes. Expiry is judged on the
 * host's monotonic clock, which every process on the host shares; a record from another boot is
 * live for its TTL from when this process first saw it. A process that finds the directory behind
 * what it has seen (deleted, restored) writes back what it saw and grants nothing for one lease.
 * See the package documentation for what this promises and where it does not hold.
 *
 * <p>Followers poll: the store offers no watch. Every call is a few local file operations; one that
 * took longer than the call timeout fails with {@link LeaseStoreException} (whether its write
 * applied is then unknown, as with a timeout on any store).
 */
public final class FileLeaseStore implements LeaseStore {

  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(1);

  /** Shorter than the time after which old versions are deleted: see {@link ElectionDirectory}. */
  public static final Duration MAX_CALL_TIMEOUT = Duration.ofSeconds(5);

  private static final Pattern ELECTION_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,199}");

  /** File systems whose files other hosts may write, or that a process of its own serves (FUSE). */
  private static final Set<String> NETWORK_FILE_SYSTEMS =
      Set.of(
          "nfs",
          "nfs4",
          "cifs",
          "smb",
          "smb2",
          "smb3",
          "smbfs",
          "ncpfs",
          "9p",
          "afs",
          "ceph",
          "glusterfs",
          "lustre",
          "gpfs",
          "ocfs2",
          "gfs2",
          "beegfs",
          "orangefs",
          "davfs",
          "virtiofs",
          "vboxsf",
          "vmhgfs",
          "prl_fs");

  private final Path directory;
  private final Duration callTimeout;
  private final HostClock clock;
  private final Clock wallClock = Clock.systemUTC();
  private final Map<String, ElectionDirectory> elections = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private FileLeaseStore(Builder builder, HostClock clock) {
    this.directory = builder.directory;
    this.callTimeout = builder.callTimeout;
    this.clock = clock;
  }

  /**
   * A store in {@code directory}, created if missing; every candidate of an election must use the
   * same one.
   */
  public static Builder builder(Path directory) {
    return new Builder(requireNonNull(directory, "directory"));
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    requireNonNull(candidate, "candidate");
    requireNonNull(ttl, "ttl");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive, but was " + ttl);
    }
    return update(
        election,
        "tryAcquire for '" + candidate + "'",
        (head, start) -> {
          long now = clock.nanoTime();
          Optional<LeaseVersion> current = head.live(now);
          if (current.isPresent()) {
            // Also when the holder is this candidate id: a live lease is never granted again.
            return Step.answer(Acquisition.held(record(election, head, now)));
          }
          refuseAfterGoingBack(election, "tryAcquire for '" + candidate + "'", now, ttl);
          // Free or expired: the next number is the new token.
          long token = head.number() + 1;
          return Step.write(
              LeaseVersion.held(
                  token,
                  candidate,
                  ttl,
                  start + ttl.toNanos(),
                  clock.bootId(),
                  wallClock.instant()),
              Acquisition.granted(new Lease(election, candidate, FencingToken.of(token), ttl, "")));
        });
  }

  /** See {@link ElectionDirectory}: after the directory went back, no grant for one lease. */
  private void refuseAfterGoingBack(String election, String what, long now, Duration ttl) {
    open(election)
        .refusal(now, ttl.toNanos())
        .ifPresent(
            why -> {
              throw new LeaseStoreException(election, what + ": " + why);
            });
  }

  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    return update(
        lease.election(),
        "renewal of '" + lease.candidate() + "'",
        (head, start) -> {
          LeaseVersion current = ownLiveVersion(lease, head);
          return Step.write(
              LeaseVersion.held(
                  current.token(),
                  lease.candidate(),
                  lease.ttl(),
                  start + lease.ttl().toNanos(),
                  clock.bootId(),
                  wallClock.instant()),
              lease);
        });
  }

  private LeaseVersion ownLiveVersion(Lease lease, ElectionDirectory.Head head) {
    long now = clock.nanoTime();
    LeaseVersion current = head.version().orElse(null);
    if (current == null || !current.isHeldBy(lease.candidate(), lease.token().value())) {
      String holder = head.live(now).flatMap(LeaseVersion::holder).orElse(null);
      throw lost(
          lease,
          holder == null ? "it was released or granted again" : "'" + holder + "' holds it now",
          holder);
    }
    if (head.live(now).isEmpty()) {
      throw lost(lease, "it expired", null);
    }
    return current;
  }

  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    // Not ours any more: nothing to write, since a release never removes somebody else's lease.
    update(
        lease.election(),
        "release by '" + lease.candidate() + "'",
        (head, start) ->
            head.version()
                .filter(v -> v.isHeldBy(lease.candidate(), lease.token().value()))
                .map(v -> Step.write(v.released(wallClock.instant()), lease))
                .orElse(Step.answer(lease)));
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    ElectionDirectory dir = open(election);
    try {
      ElectionDirectory.Head head = dir.head();
      long now = clock.nanoTime();
      return head.live(now).map(v -> record(election, head, now));
    } catch (IOException e) {
      throw failure(election, "read", dir, e);
    }
  }

  /** What a call makes of the head it read: an answer, and the version to write first, if any. */
  private record Step<T>(Optional<LeaseVersion> next, T answer) {
    static <T> Step<T> answer(T answer) {
      return new Step<>(Optional.empty(), answer);
    }

    static <T> Step<T> write(LeaseVersion next, T answer) {
      return new Step<>(Optional.of(next), answer);
    }
  }

  @FunctionalInterface
  private interface Decision<T> {
    /**
     * {@code start}: the host clock before the head was read, which a written lease counts from.
     */
    Step<T> decide(ElectionDirectory.Head head, long start);
  }

  /**
   * Reads the election's head and writes the version {@code decision} makes of it as the next
   * number. When another writer took that number first, reads again, until the call timeout.
   */
  private <T> T update(String election, String what, Decision<T> decision) {
    ElectionDirectory dir = open(election);
    long callStart = clock.nanoTime();
    try {
      while (true) {
        long start = clock.nanoTime();
        ElectionDirectory.Head head = dir.head();
        Step<T> step = decision.decide(head, start);
        if (step.next().isEmpty() || write(dir, head, step.next().get(), start, what)) {
          return step.answer();
        }
        if (clock.nanoTime() - callStart > callTimeout.toNanos()) {
          throw new LeaseStoreException(
              election,
              what
                  + ": other writers took every next version within the call timeout ("
                  + callTimeout.toMillis()
                  + "ms)");
        }
      }
    } catch (IOException e) {
      throw failure(election, what, dir, e);
    }
  }

  /**
   * Creates the version after {@code read}; true when it is ours. A version created after the call
   * timeout is not trusted (see {@link ElectionDirectory}): the call fails, and whether it applied
   * is unknown.
   */
  private boolean write(
      ElectionDirectory dir,
      ElectionDirectory.Head read,
      LeaseVersion next,
      long start,
      String what)
      throws IOException {
    if (!dir.create(read, next)) {
      return false;
    }
    long took = clock.nanoTime() - start;
    if (took > callTimeout.toNanos()) {
      throw new IOException(
          what
              + " took "
              + TimeUnit.NANOSECONDS.toMillis(took)
              + "ms, more than the call timeout ("
              + callTimeout.toMillis()
              + "ms); whether it applied is unknown");
    }
    dir.prune();
    return true;
  }

  /**
   * Refuses names that are not a plain file name: letters, digits, '.', '_', '-', not starting with
   * '.', '_' or '-'.
   */
  @Override
  public void checkElectionName(String election) {
    requireNonNull(election, "election");
    if (!ELECTION_NAME.matcher(election).matches()) {
      throw new ConfigurationException(
          "election name '"
              + election
              + "' cannot be a directory of the file lease store; use 1 to 200 letters, digits, '.', '_' or '-',"
              + " starting with a letter or digit");
    }
  }

  @Override
  public String describe() {
    return "file (" + directory + ")";
  }

  /** Nothing to give back: the store holds no thread, no open file and no lock between calls. */
  @Override
  public void close() {
    closed = true;
  }

  private ElectionDirectory open(String election) {
    requireNonNull(election, "election");
    if (closed) {
      throw new LeaseStoreException(election, "the file lease store is closed");
    }
    checkElectionName(election);
    return elections.computeIfAbsent(
        election, e -> new ElectionDirectory(directory.resolve(e), clock));
  }

  private static LeaseRecord record(String election, ElectionDirectory.Head head, long now) {
    LeaseVersion v = head.version().orElseThrow();
    return new LeaseRecord(
        election,
        v.holder().orElseThrow(),
        FencingToken.of(v.token()),
        v.ttl(),
        Optional.of(v.writtenAt()),
        Optional.of(Duration.ofNanos(Math.max(0, head.expiresAt() - now))));
  }

  private static LeaseLostException lost(Lease lease, String why, String holder) {
    return new LeaseLostException(
        lease.election(),
        "lease of '" + lease.candidate() + "' (token " + lease.token() + ") is lost: " + why,
        holder);
  }

  private static LeaseStoreException failure(
      String election, String what, ElectionDirectory dir, IOException e) {
    return new LeaseStoreException(election, what + " in " + dir.path() + " failed: " + e, e);
  }

  /** Why {@code type} cannot hold leases, if it cannot: a network or FUSE file system. */
  static Optional<String> unsafeFileSystem(String type) {
    String t = type.toLowerCase(Locale.ROOT);
    if (NETWORK_FILE_SYSTEMS.contains(t)) {
      return Optional.of(
          "a network file system ("
              + type
              + "): other hosts may write it, and their clocks are not this host's");
    }
    if (t.equals("fuse") || t.startsWith("fuse.")) {
      return Optional.of(
          "a FUSE file system ("
              + type
              + "): a process serves it, maybe from another host, and stalls when that process does");
    }
    return Optional.empty();
  }

  /** Configures a {@link FileLeaseStore}; only the directory is required. */
  public static final class Builder {

    private final Path directory;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private MonotonicClock clock;

    private Builder(Path directory) {
      this.directory = directory.toAbsolutePath().normalize();
    }

    /**
     * How long a call may take before it fails (default 1 s, at most {@link #MAX_CALL_TIMEOUT});
     * keep it at most half the renew deadline.
     */
    public Builder callTimeout(Duration callTimeout) {
      requireNonNull(callTimeout, "callTimeout");
      if (callTimeout.isNegative()
          || callTimeout.isZero()
          || callTimeout.compareTo(MAX_CALL_TIMEOUT) > 0) {
        throw new ConfigurationException(
            "callTimeout must be positive and at most "
                + MAX_CALL_TIMEOUT.toSeconds()
                + "s, but was "
                + callTimeout.toMillis()
                + "ms");
      }
      this.callTimeout = callTimeout;
      return this;
    }

    /**
     * The monotonic clock that judges expiry; by default {@code System.nanoTime()}, which is the
     * clock all processes on the host share. Every store on the directory must use the same clock.
     */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Creates the directory if missing and checks that it can hold leases: a local file system that
     * supports hard links, writable by this process.
     *
     * @throws ConfigurationException naming the directory and what is wrong with it
     */
    public FileLeaseStore build() {
      try {
        Files.createDirectories(directory);
      } catch (IOException e) {
        throw new ConfigurationException(
            "directory '" + directory + "' cannot be created: " + e, e);
      }
      String type;
      try {
        type = Files.getFileStore(directory).type();
      } catch (IOException e) {
        throw new ConfigurationException(
            "directory '" + directory + "': cannot tell which file system it is on: " + e, e);
      }
      unsafeFileSystem(type)
          .ifPresent(
              why -> {
                throw new ConfigurationException(
                    "directory '"
                        + directory
                        + "' is on "
                        + why
                        + "; the file lease store needs a local file system of the host all candidates run on");
              });
      probe(directory);
      return new FileLeaseStore(this, clock == null ? HostClock.system() : HostClock.of(clock));
    }

    /**
     * One create-exclusive, link, sync and delete, as every write does: fails now rather than at
     * the first grant.
     */
    private static void probe(Path directory) {
      Path file = directory.resolve(".tmp-" + ProcessHandle.current().pid() + "-probe");
      Path link =
          directory.resolve(".probe-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
      try {
        Files.deleteIfExists(file);
        Files.write(file, new byte[0]);
        Files.createLink(link, file);
        ElectionDirectory.sync(directory);
      } catch (IOException | UnsupportedOperationException e) {
        throw new ConfigurationException(
            "directory '"
                + directory
                + "' cannot hold leases: creating, hard-linking and syncing a file there failed ("
                + e
                + "); use a writable directory on a local file system such as ext4, xfs, btrfs or tmpfs",
            e);
      } finally {
        try {
          Files.deleteIfExists(link);
          Files.deleteIfExists(file);
        } catch (IOException e) {
          // a leftover probe file is harmless: the store ignores it
        }
      }
    }
  }
}
