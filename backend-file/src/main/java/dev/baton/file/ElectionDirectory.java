package dev.baton.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One election's directory: numbered version files, the highest of which is the election's state.
 *
 * <p>A version is created whole or not at all: its content is written to a temporary file and
 * synced, then hard-linked to its number, which fails when that number exists, then the directory
 * is synced. So two writers racing for the same number cannot both win, a reader never sees a
 * half-written version, and a version reported written survives a crash of the process or of the
 * host. No lock is held at any time, so a writer paused anywhere delays nobody.
 *
 * <p>Old versions are deleted, and a deleted number could be created again by a writer that read
 * the directory long ago and was paused before its link. That is why a version is deleted only
 * {@link #PRUNE_AFTER} after a higher one was seen, and why a writer trusts its link only when it
 * completed within less than that of the start of the listing it was based on (the caller checks
 * this against its call timeout, which is shorter). A writer whose link completed in time and whose
 * number was free has created that number for the first time: had it existed, it could only have
 * been deleted after a higher version was seen {@code PRUNE_AFTER} before, and the writer's
 * listing, which started less than that before the link, would have shown that higher version.
 *
 * <p>That holds while the directory only moves forward. Deleted (a {@code git clean}, a cleanup
 * job) or restored from an older copy, it goes back, and what each process remembers of it is then
 * the only record of the versions lost. So each process remembers the highest version it has seen
 * or written, whole: when the directory's highest is lower, or the same number holds other bytes,
 * the directory went back. It also remembers the highest number it found taken when it tried to
 * create it: a version it never read, whose loss shows only as a head below it ({@code rm -rf}
 * unlinks in directory order, which may take the newest versions first and leave as the head one
 * this process saw, byte for byte). The process then writes back the version it remembers, under
 * its own number (the state it saw, so what it writes was once the state), and the holder's next
 * renewal does the same with its own: the highest number any live process remembers becomes the
 * head again, and tokens go on above it. It forgets its cleanup mark, which belonged to the
 * directory that was, and for one lease (the longest it has seen in the election) it grants
 * nothing: a grant it never saw may be live, and its holder will have written it back or let it run
 * out by then. A version written back carries when its writer found the directory gone back, so
 * every process that reads it refuses for that same lease: one that remembers exactly the version
 * written back (the bytes differ by that mark), one that remembers less, and one started since.
 *
 * <p>A version written in another boot says when it ends on a clock that is not this one's: it is
 * judged live until its TTL has passed since this process first saw it. After a reboot, that delays
 * the first grant by one lease; with a holder on another host or in a restored checkpoint of a
 * process, it keeps everybody else out while that holder renews.
 */
final class ElectionDirectory {

  /** How long after a higher version was seen a lower one may be deleted. */
  static final long PRUNE_AFTER = TimeUnit.SECONDS.toNanos(10);

  private static final Pattern VERSION = Pattern.compile("(\\d{1,18})\\.lease");
  private static final Pattern TEMPORARY = Pattern.compile("\\.tmp-(\\d+)-\\d+-\\d+");
  private static final long PID = ProcessHandle.current().pid();
  private static final AtomicLong TEMPORARIES = new AtomicLong();

  /** Re-listings when the highest version was deleted between listing and reading it. */
  private static final int READ_ATTEMPTS = 10;

  private final Path dir;
  private final HostClock clock;

  /**
   * The highest version seen at one time, its bytes and that time: what may be deleted {@link
   * #PRUNE_AFTER} later, if that version is still there as it was.
   */
  private long markVersion;

  private byte[] markBytes;
  private long markSeenAt;

  /** The highest version this process has read or written, and its bytes. */
  private long seenVersion;

  private byte[] seenBytes;
  private long longestTtlNanos;

  /**
   * The highest number this process found taken when it tried to create it, and has not yet found
   * missing: a version it never read, but that existed.
   */
  private long takenVersion;

  /** When this process last found the directory gone back, and from which version to which. */
  private boolean wentBack;

  private long wentBackAt;
  private String wentBackFrom;

  /** The last written-back version whose mark this process took on. */
  private long adoptedVersion;

  private byte[] adoptedBytes;

  /** The version of another boot at the head, and when this process first saw it. */
  private long otherBootVersion;

  private byte[] otherBootBytes;
  private long otherBootSeenAt;

  ElectionDirectory(Path dir, HostClock clock) {
    this.dir = dir;
    this.clock = clock;
  }

  Path path() {
    return dir;
  }

  /**
   * The highest version and its content: the election's current state. {@code expiresAt}: the end
   * of its lease on this host's clock (see {@link #expiresAt}).
   */
  record Head(long number, Optional<LeaseVersion> version, long expiresAt) {

    /** The version, if it has a holder whose lease has not run out at {@code now}. */
    Optional<LeaseVersion> live(long now) {
      return version.filter(v -> v.holder().isPresent() && now - expiresAt < 0);
    }
  }

  /**
   * The current head; number 0 and no version when nothing was ever written. When the directory
   * went back since this process last looked, writes back what it remembers first.
   */
  synchronized Head head() throws IOException {
    boolean wroteBack = false;
    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      long highest = listing().highest();
      byte[] bytes = null;
      if (highest != 0) {
        try {
          bytes = Files.readAllBytes(dir.resolve(name(highest)));
        } catch (NoSuchFileException e) {
          continue; // superseded and deleted since the listing: list again
        }
      }
      if (highest < takenVersion) {
        // A version this process never read is gone, with what it held: rm -rf unlinks in the
        // order readdir gives (hash order on ext4), so the newest versions can go first and leave
        // an older one as the head, maybe one this process saw, byte for byte. Only those that
        // read the lost versions can write them back; this one grants nothing for a lease.
        wentBack("from version " + takenVersion + " to " + highest);
        takenVersion = 0;
      }
      if (highest < seenVersion || (highest == seenVersion && !Arrays.equals(bytes, seenBytes))) {
        if (wroteBack && highest < seenVersion) {
          throw new IOException(
              dir
                  + " went back again, to version "
                  + highest
                  + ", while version "
                  + seenVersion
                  + " was written back; it is being deleted or restored: try again when that is"
                  + " done");
        }
        if (!wroteBack) {
          wentBack("from version " + seenVersion + " to " + highest);
          writeBack();
          wroteBack = true;
          continue;
        }
      }
      if (highest == 0) {
        return new Head(0, Optional.empty(), 0);
      }
      LeaseVersion version;
      try {
        version = LeaseVersion.decode(bytes, dir.resolve(name(highest)).toString());
      } catch (IllegalArgumentException e) {
        throw new IOException(e.getMessage(), e);
      }
      if (highest >= seenVersion) {
        // Also when what this process wrote back lost to another version of the same number: that
        // one is the state now, and the refusal to grant after going back covers the difference.
        seen(highest, bytes, version);
      }
      if (version.writtenBack().isPresent()) {
        adoptWriteBack(highest, bytes, version.writtenBack().get());
      }
      return new Head(highest, Optional.of(version), expiresAt(highest, bytes, version));
    }
    throw new IOException(
        "the versions in "
            + dir
            + " were deleted faster than they could be read, "
            + READ_ATTEMPTS
            + " times in a row");
  }

  private void seen(long number, byte[] bytes, LeaseVersion version) {
    seenVersion = number;
    seenBytes = bytes;
    longestTtlNanos = Math.max(longestTtlNanos, version.ttl().toNanos());
  }

  private void wentBack(String how) {
    wentBack(how, clock.nanoTime());
  }

  private void wentBack(String how, long at) {
    wentBack = true;
    wentBackAt = at;
    wentBackFrom = how;
    // The mark names a version of the directory that was: below it may now be somebody's grant.
    markVersion = 0;
    markBytes = null;
  }

  /**
   * The version this process saw last, written back under its number, unless that number exists:
   * then somebody else wrote it back or wrote it anew, and the head read next is the state.
   */
  private void writeBack() throws IOException {
    Files.createDirectories(dir);
    LeaseVersion seen = LeaseVersion.decode(seenBytes, name(seenVersion));
    link(seenVersion, seen.writtenBack(wentBackAt, clock.bootId()).encode());
  }

  /**
   * Refuses to grant for one lease from when the candidate that wrote back {@code number} found the
   * directory gone back: what this process remembers may be exactly the version written back, or
   * older, or nothing, and then only the mark in the version shows that grants were lost. A mark of
   * another boot cannot be placed on this clock: the lease counts from when this process first saw
   * it.
   */
  private void adoptWriteBack(long number, byte[] bytes, LeaseVersion.WrittenBack mark) {
    if (number == adoptedVersion && Arrays.equals(bytes, adoptedBytes)) {
      return;
    }
    adoptedVersion = number;
    adoptedBytes = bytes;
    long at = mark.bootId().equals(clock.bootId()) ? mark.atNanos() : clock.nanoTime();
    if (!wentBack || at - wentBackAt > 0) {
      wentBack("to version " + number + ", written back by a candidate that found it gone", at);
    }
  }

  /**
   * The end of {@code version}'s lease on this host's clock: as written when it is of this boot;
   * else {@code ttl} after this process first saw it, since another boot's clock (another host's,
   * or the one a restored process checkpoint ran on) cannot be compared with this one.
   */
  private long expiresAt(long number, byte[] bytes, LeaseVersion version) {
    if (version.bootId().equals(clock.bootId())) {
      return version.expiresAtNanos();
    }
    if (number != otherBootVersion || !Arrays.equals(bytes, otherBootBytes)) {
      otherBootVersion = number;
      otherBootBytes = bytes;
      otherBootSeenAt = clock.nanoTime();
    }
    return otherBootSeenAt + version.ttl().toNanos();
  }

  /**
   * Why this process may not grant a lease of {@code ttl} now, if it may not: the directory went
   * back less than one lease ago.
   */
  synchronized Optional<String> refusal(long now, long ttlNanos) {
    if (!wentBack) {
      return Optional.empty();
    }
    long wait = Math.max(longestTtlNanos, ttlNanos);
    long since = now - wentBackAt;
    if (since >= wait) {
      return Optional.empty();
    }
    return Optional.of(
        dir
            + " went back "
            + wentBackFrom
            + " "
            + TimeUnit.NANOSECONDS.toMillis(since)
            + "ms ago (deleted, or restored from an older copy, while this process used it): a lease"
            + " granted before that and not seen here may still be live, so nothing is granted"
            + " here until one lease ("
            + TimeUnit.NANOSECONDS.toMillis(wait)
            + "ms, the longest seen in this election) has passed, in "
            + TimeUnit.NANOSECONDS.toMillis(wait - since)
            + "ms; a holder that still runs writes its lease back before that. Delete or restore"
            + " the lease directory only while no candidate runs");
  }

  /**
   * Creates version {@code number} with {@code content}, synced to disk with the directory entry.
   *
   * @return false when version {@code number} exists already: somebody else wrote first
   */
  synchronized boolean create(Head read, LeaseVersion content) throws IOException {
    long number = read.number() + 1;
    if (number == 1) {
      Files.createDirectories(dir);
    } else if (!Files.isDirectory(dir)) {
      // Deleted since the head was read: not a place to write a version after it. Reading again
      // finds the directory gone back.
      return false;
    }
    byte[] bytes = content.encode();
    if (!link(number, bytes)) {
      return false;
    }
    if (number > seenVersion) {
      seen(number, bytes, content);
    }
    if (content.holder().isPresent()) {
      checkFollows(read);
    }
    return true;
  }

  /**
   * Fails when the lease just written after {@code read} is not the head that follows it: a higher
   * version is there, or the one read is gone or changed. Then a number this process never saw was
   * deleted between its read and its link ({@code rm -rf} takes versions in directory order, not
   * newest last), and the lease written may repeat a token still held: it is not reported, and this
   * process grants nothing for one lease. Nobody else writes over a live lease, so this never fails
   * while the directory only moves forward.
   */
  private void checkFollows(Head read) throws IOException {
    long number = read.number() + 1;
    long highest = listing().highest();
    boolean followed = read.number() == 0 || read.version().equals(versionOf(read.number()));
    if (highest > number || !followed) {
      wentBack(
          "under version "
              + number
              + " just written (the highest is "
              + highest
              + (followed ? "" : "; version " + read.number() + " it followed is gone or changed")
              + ")");
      throw new IOException(
          dir
              + " went back while version "
              + number
              + " was written (deleted or restored while in use): the lease it holds may repeat a"
              + " token, so it is not reported");
    }
  }

  /** Version {@code number} as it is now; empty when it is gone or is not one this store wrote. */
  private Optional<LeaseVersion> versionOf(long number) throws IOException {
    byte[] bytes = bytesOf(number);
    if (bytes == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(LeaseVersion.decode(bytes, name(number)));
    } catch (IllegalArgumentException e) {
      return Optional.empty(); // overwritten by something else: not the version followed either
    }
  }

  /** Creates version {@code number} whole; false when it exists (or the directory went away). */
  private boolean link(long number, byte[] bytes) throws IOException {
    // The pid names the owner for the clean-up of orphans; the random part keeps names apart across
    // pid namespaces and reboots, where a pid can come again.
    Path temporary =
        dir.resolve(
            ".tmp-"
                + PID
                + "-"
                + TEMPORARIES.incrementAndGet()
                + "-"
                + ThreadLocalRandom.current().nextInt(1_000_000_000));
    try {
      try (FileChannel out =
          FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
          out.write(buffer);
        }
        out.force(true);
      }
      try {
        Files.createLink(dir.resolve(name(number)), temporary);
      } catch (FileAlreadyExistsException e) {
        takenVersion = Math.max(takenVersion, number);
        return false;
      }
    } catch (NoSuchFileException e) {
      return false; // the directory was deleted meanwhile
    } finally {
      Files.deleteIfExists(temporary);
    }
    sync(dir);
    return true;
  }

  /**
   * Deletes versions below the highest one seen {@link #PRUNE_AFTER} ago, if that one is still
   * there as it was seen (so the directory did not go back and grow again meanwhile), and temporary
   * files of processes that are gone (killed between writing and linking). The current head is
   * never deleted. Failures are left for the next time.
   */
  synchronized void prune() {
    if (markVersion != 0 && clock.nanoTime() - markSeenAt < PRUNE_AFTER) {
      return;
    }
    try {
      Listing listing = listing();
      long seenAt = clock.nanoTime();
      if (markVersion != 0 && Arrays.equals(bytesOf(markVersion), markBytes)) {
        for (long v : listing.versions()) {
          if (v < markVersion) {
            Files.deleteIfExists(dir.resolve(name(v)));
          }
        }
        for (Path t : listing.orphans()) {
          Files.deleteIfExists(t);
        }
      }
      markBytes = bytesOf(listing.highest());
      markVersion = markBytes == null ? 0 : listing.highest();
      markSeenAt = seenAt;
    } catch (IOException e) {
      // Only space is at stake; the next write tries again.
    }
  }

  /** The content of version {@code number}; null when it does not exist. */
  private byte[] bytesOf(long number) throws IOException {
    try {
      return number == 0 ? null : Files.readAllBytes(dir.resolve(name(number)));
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  private record Listing(long highest, List<Long> versions, List<Path> orphans) {}

  private Listing listing() throws IOException {
    long highest = 0;
    List<Long> versions = new ArrayList<>();
    List<Path> orphans = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        Matcher v = VERSION.matcher(name);
        if (v.matches()) {
          long n = Long.parseLong(v.group(1));
          versions.add(n);
          highest = Math.max(highest, n);
          continue;
        }
        Matcher t = TEMPORARY.matcher(name);
        if (t.matches() && ProcessHandle.of(Long.parseLong(t.group(1))).isEmpty()) {
          orphans.add(entry);
        }
      }
    } catch (NoSuchFileException e) {
      // no version written yet
    }
    return new Listing(highest, versions, orphans);
  }

  static String name(long number) {
    return String.format("%012d.lease", number);
  }

  /**
   * Makes a link or unlink in {@code directory} durable (Linux syncs a directory opened for
   * reading).
   */
  static void sync(Path directory) throws IOException {
    try (FileChannel d = FileChannel.open(directory, StandardOpenOption.READ)) {
      d.force(true);
    }
  }
}
