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
   * The highest version seen at one time, and that time: what may be deleted {@link #PRUNE_AFTER}
   * later.
   */
  private long markVersion;

  private long markSeenAt;

  ElectionDirectory(Path dir, HostClock clock) {
    this.dir = dir;
    this.clock = clock;
  }

  Path path() {
    return dir;
  }

  /** The highest version and its content: the election's current state. */
  record Head(long number, Optional<LeaseVersion> version) {}

  /** The current head; number 0 and no version when nothing was ever written. */
  Head head() throws IOException {
    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      long highest = listing().highest();
      if (highest == 0) {
        return new Head(0, Optional.empty());
      }
      Path file = dir.resolve(name(highest));
      try {
        return new Head(
            highest, Optional.of(LeaseVersion.decode(Files.readAllBytes(file), file.toString())));
      } catch (NoSuchFileException e) {
        // superseded and deleted since the listing: list again
      } catch (IllegalArgumentException e) {
        throw new IOException(e.getMessage(), e);
      }
    }
    throw new IOException(
        "the versions in "
            + dir
            + " were deleted faster than they could be read, "
            + READ_ATTEMPTS
            + " times in a row");
  }

  /**
   * Creates version {@code number} with {@code content}, synced to disk with the directory entry.
   *
   * @return false when version {@code number} exists already: somebody else wrote first
   */
  boolean create(long number, LeaseVersion content) throws IOException {
    Files.createDirectories(dir);
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
        ByteBuffer bytes = ByteBuffer.wrap(content.encode());
        while (bytes.hasRemaining()) {
          out.write(bytes);
        }
        out.force(true);
      }
      try {
        Files.createLink(dir.resolve(name(number)), temporary);
      } catch (FileAlreadyExistsException e) {
        return false;
      }
    } finally {
      Files.deleteIfExists(temporary);
    }
    sync(dir);
    return true;
  }

  /**
   * Deletes versions below the highest one seen {@link #PRUNE_AFTER} ago, and temporary files of
   * processes that are gone (killed between writing and linking). The current head is never
   * deleted. Failures are left for the next time.
   */
  synchronized void prune() {
    if (markVersion != 0 && clock.nanoTime() - markSeenAt < PRUNE_AFTER) {
      return;
    }
    try {
      Listing listing = listing();
      long seenAt = clock.nanoTime();
      if (markVersion == 0) {
        markVersion = listing.highest();
        markSeenAt = seenAt;
        return;
      }
      if (seenAt - markSeenAt < PRUNE_AFTER) {
        return;
      }
      for (long v : listing.versions()) {
        if (v < markVersion) {
          Files.deleteIfExists(dir.resolve(name(v)));
        }
      }
      for (Path t : listing.orphans()) {
        Files.deleteIfExists(t);
      }
      markVersion = listing.highest();
      markSeenAt = seenAt;
    } catch (IOException e) {
      // Only space is at stake; the next write tries again.
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
