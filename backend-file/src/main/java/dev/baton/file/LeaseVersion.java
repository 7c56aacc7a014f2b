package dev.baton.file;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.Properties;

/**
 * The content of one numbered version file of an election: who holds it, with which token, and
 * until when on the host's monotonic clock of which boot. Immutable once written: a change is a new
 * version, never an edit.
 *
 * @param token the fencing token of the term this version belongs to: the number of the version
 *     that granted it, carried unchanged by renewals and by the release
 * @param holder the holder; empty when the version records a release
 * @param ttl the holder's time-to-live
 * @param expiresAtNanos the end of the lease on {@link HostClock} of boot {@code bootId}
 * @param bootId the boot the expiry belongs to; after a reboot the monotonic clock starts again
 * @param writtenAt wall-clock time of the write, for people only
 * @param writtenBack set when this is a version written back by a candidate that found the
 *     directory gone back: when that was, so that every reader grants nothing for one lease from
 *     then, whatever it remembers (see {@link ElectionDirectory})
 */
record LeaseVersion(
    long token,
    Optional<String> holder,
    Duration ttl,
    long expiresAtNanos,
    String bootId,
    Instant writtenAt,
    Optional<WrittenBack> writtenBack) {

  /** When a candidate found the directory gone back, on the host clock of boot {@code bootId}. */
  record WrittenBack(long atNanos, String bootId) {}

  private static final String FORMAT = "baton-file-lease-1";

  static LeaseVersion held(
      long token,
      String holder,
      Duration ttl,
      long expiresAtNanos,
      String bootId,
      Instant writtenAt) {
    return new LeaseVersion(
        token, Optional.of(holder), ttl, expiresAtNanos, bootId, writtenAt, Optional.empty());
  }

  /** The same term given up: the token stays, so that the next grant's is still higher. */
  LeaseVersion released(Instant now) {
    return new LeaseVersion(
        token, Optional.empty(), ttl, expiresAtNanos, bootId, now, Optional.empty());
  }

  /**
   * This version as written back by a candidate that found the directory gone back at {@code
   * atNanos}: the same state, in bytes that differ from the original's, so that also a reader that
   * remembers the original byte for byte sees that the directory went back.
   */
  LeaseVersion writtenBack(long atNanos, String bootId) {
    return new LeaseVersion(
        token,
        holder,
        ttl,
        expiresAtNanos,
        this.bootId,
        writtenAt,
        Optional.of(new WrittenBack(atNanos, bootId)));
  }

  boolean isHeldBy(String candidate, long leaseToken) {
    return token == leaseToken && holder.filter(candidate::equals).isPresent();
  }

  byte[] encode() {
    Properties p = new Properties();
    p.setProperty("format", FORMAT);
    p.setProperty("token", Long.toString(token));
    holder.ifPresent(h -> p.setProperty("holder", h));
    p.setProperty("ttl-nanos", Long.toString(ttl.toNanos()));
    p.setProperty("expires-at-monotonic-nanos", Long.toString(expiresAtNanos));
    p.setProperty("boot-id", bootId);
    p.setProperty("written-at", writtenAt.toString());
    writtenBack.ifPresent(
        w -> {
          p.setProperty("written-back-at-monotonic-nanos", Long.toString(w.atNanos()));
          p.setProperty("written-back-boot-id", w.bootId());
        });
    StringWriter out = new StringWriter();
    try {
      p.store(out, null);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a StringWriter does not fail
    }
    return out.toString().getBytes(UTF_8);
  }

  /** Reads what {@link #encode} wrote; refuses anything else, naming {@code what}. */
  static LeaseVersion decode(byte[] content, String what) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(new String(content, UTF_8)));
      if (!FORMAT.equals(p.getProperty("format"))) {
        throw new IllegalArgumentException(
            "format is '" + p.getProperty("format") + "', expected " + FORMAT);
      }
      Optional<WrittenBack> writtenBack = Optional.empty();
      if (p.getProperty("written-back-at-monotonic-nanos") != null) {
        writtenBack =
            Optional.of(
                new WrittenBack(
                    Long.parseLong(p.getProperty("written-back-at-monotonic-nanos")),
                    required(p, "written-back-boot-id")));
      }
      return new LeaseVersion(
          Long.parseLong(required(p, "token")),
          Optional.ofNullable(p.getProperty("holder")),
          Duration.ofNanos(Long.parseLong(required(p, "ttl-nanos"))),
          Long.parseLong(required(p, "expires-at-monotonic-nanos")),
          required(p, "boot-id"),
          Instant.parse(required(p, "written-at")),
          writtenBack);
    } catch (IOException | IllegalArgumentException | DateTimeParseException e) {
      throw new IllegalArgumentException(
          what + " is not a lease version this store wrote: " + e.getMessage(), e);
    }
  }

  private static String required(Properties p, String key) {
    String value = p.getProperty(key);
    if (value == null) {
      throw new IllegalArgumentException("'" + key + "' is missing");
    }
    return value;
  }
}
