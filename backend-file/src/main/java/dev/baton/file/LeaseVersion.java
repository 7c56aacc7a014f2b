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
 */
record LeaseVersion(
    long token,
    Optional<String> holder,
    Duration ttl,
    long expiresAtNanos,
    String bootId,
    Instant writtenAt) {

  private static final String FORMAT = "baton-file-lease-1";

  static LeaseVersion held(
      long token,
      String holder,
      Duration ttl,
      long expiresAtNanos,
      String bootId,
      Instant writtenAt) {
    return new LeaseVersion(token, Optional.of(holder), ttl, expiresAtNanos, bootId, writtenAt);
  }

  /** The same term given up: the token stays, so that the next grant's is still higher. */
  LeaseVersion released(Instant now) {
    return new LeaseVersion(token, Optional.empty(), ttl, expiresAtNanos, bootId, now);
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
      return new LeaseVersion(
          Long.parseLong(required(p, "token")),
          Optional.ofNullable(p.getProperty("holder")),
          Duration.ofNanos(Long.parseLong(required(p, "ttl-nanos"))),
          Long.parseLong(required(p, "expires-at-monotonic-nanos")),
          required(p, "boot-id"),
          Instant.parse(required(p, "written-at")));
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
