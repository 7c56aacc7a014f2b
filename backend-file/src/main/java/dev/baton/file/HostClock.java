package dev.baton.file;

import static java.util.Objects.requireNonNull;

import dev.baton.election.ConfigurationException;
import dev.baton.election.MonotonicClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The clock every process on the host shares, and the boot it belongs to. On Linux {@code
 * System.nanoTime()} is {@code CLOCK_MONOTONIC}: one clock for all processes of one boot, counted
 * from the boot, so a reading written by one process means the same instant to another. A process
 * in a time namespace of its own sees it shifted by that namespace's offset, which is subtracted
 * here, so processes of different namespaces on one kernel still agree. After a reboot the clock
 * starts again: readings carry the boot id, and one from another boot means nothing.
 */
final class HostClock {

  private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");
  private static final Path TIME_NAMESPACE_OFFSETS = Path.of("/proc/self/timens_offsets");

  private final MonotonicClock clock;
  private final long namespaceOffsetNanos;
  private final String bootId;

  private HostClock(MonotonicClock clock, long namespaceOffsetNanos, String bootId) {
    this.clock = clock;
    this.namespaceOffsetNanos = namespaceOffsetNanos;
    this.bootId = bootId;
  }

  /** This process's {@code System.nanoTime()}, moved out of its time namespace. */
  static HostClock system() {
    return new HostClock(MonotonicClock.system(), monotonicNamespaceOffset(), currentBootId());
  }

  /** A clock the caller supplies (a test's): taken as it is, without a namespace offset. */
  static HostClock of(MonotonicClock clock) {
    return new HostClock(requireNonNull(clock, "clock"), 0, currentBootId());
  }

  long nanoTime() {
    return clock.nanoTime() - namespaceOffsetNanos;
  }

  String bootId() {
    return bootId;
  }

  /**
   * Linux's boot id; elsewhere the start time of process 1, which is as good a name for a boot.
   * Without either, expiry written before a reboot could not be told from expiry after it.
   */
  static String currentBootId() {
    try {
      String id = Files.readString(BOOT_ID).trim();
      if (!id.isEmpty()) {
        return id;
      }
    } catch (IOException | SecurityException e) {
      // not Linux, or /proc hidden: try the other way
    }
    Optional<String> init =
        ProcessHandle.of(1).flatMap(p -> p.info().startInstant()).map(i -> "init-started-" + i);
    return init.orElseThrow(
        () ->
            new ConfigurationException(
                "the file lease store cannot tell this boot from the last one (neither "
                    + BOOT_ID
                    + " nor the start time of process 1 can be read); use another backend"));
  }

  /** The monotonic clock's offset in this process's time namespace; 0 without time namespaces. */
  private static long monotonicNamespaceOffset() {
    try {
      for (String line : Files.readAllLines(TIME_NAMESPACE_OFFSETS)) {
        String[] f = line.trim().split("\\s+");
        if (f.length == 3 && f[0].equals("monotonic")) {
          return Long.parseLong(f[1]) * 1_000_000_000L + Long.parseLong(f[2]);
        }
      }
    } catch (IOException | SecurityException | NumberFormatException e) {
      // a kernel without time namespaces: every process sees the host's clock as it is
    }
    return 0;
  }
}
