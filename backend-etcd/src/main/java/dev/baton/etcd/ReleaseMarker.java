package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import java.util.OptionalLong;

/**
 * The value a release leaves on an election key in per-election mode: "free, and the etcd lease
 * under this key is yours to take". The key stays on the releasing holder's etcd lease, which the
 * holder never renews or revokes again, so the next holder can take the key and the lease over in
 * one transaction, sent together with a keep-alive of that lease, instead of granting a lease
 * first: a graceful handover costs one round trip. Nobody taking it over, the lease ends by itself
 * within its TTL and etcd deletes the key.
 *
 * <p>The marker names the TTL, in seconds, the lease was asked for, so that only a candidate asking
 * for that TTL takes the lease over; others attach the key to a lease of their own. A key carrying
 * the marker is free to every reader: nobody holds it. Candidate ids that begin with a NUL
 * character are refused, so no candidate can be mistaken for it.
 */
final class ReleaseMarker {

  private static final String PREFIX = "\u0000baton:released:ttl=";
  private static final ByteSequence PREFIX_BYTES = ByteSequence.from(PREFIX, UTF_8);

  private ReleaseMarker() {}

  static ByteSequence value(long requestedSeconds) {
    return ByteSequence.from(PREFIX + requestedSeconds, UTF_8);
  }

  /**
   * Whether this value, or one like it, could be the marker: candidate ids may not begin with NUL.
   */
  static boolean isMarker(ByteSequence value) {
    return value.startsWith(PREFIX_BYTES);
  }

  static boolean isMarker(KeyValue kv) {
    return isMarker(kv.getValue());
  }

  /**
   * The TTL the marked key's lease was asked for; empty when the marker is not one this version
   * wrote.
   */
  static OptionalLong requestedSeconds(KeyValue kv) {
    String value = kv.getValue().toString(UTF_8);
    if (!value.startsWith(PREFIX)) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(Long.parseLong(value.substring(PREFIX.length())));
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }
}
