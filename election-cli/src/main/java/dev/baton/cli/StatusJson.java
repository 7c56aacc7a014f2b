package dev.baton.cli;

import dev.baton.election.LeaseRecord;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * {@code elect status --output json}: one JSON object on one line, in the schema docs/elect.md
 * documents (version {@value #SCHEMA}). Fields are only ever added; a change to the meaning or type
 * of one is a new schema number. Written by hand: the CLI has no JSON library of its own, and these
 * few fields do not need one.
 */
final class StatusJson {

  /** The schema's version, the object's first field. */
  static final int SCHEMA = 1;

  private StatusJson() {}

  static String of(
      String election, Optional<String> backend, String store, Optional<LeaseRecord> current) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("schema", SCHEMA);
    fields.put("election", election);
    fields.put("backend", backend.orElse(null));
    fields.put("store", store);
    fields.put("leader", current.map(LeaseRecord::holder).orElse(null));
    fields.put("fencing_token", current.map(r -> r.token().value()).orElse(null));
    fields.put("lease_duration_ms", current.map(r -> r.ttl().toMillis()).orElse(null));
    fields.put(
        "expires_in_ms",
        current.flatMap(LeaseRecord::expiresIn).map(Duration::toMillis).orElse(null));
    fields.put("renewed_ago_ms", current.flatMap(StatusJson::renewedAgo).orElse(null));
    fields.put(
        "renewed_at", current.flatMap(LeaseRecord::renewedAt).map(Object::toString).orElse(null));
    StringBuilder b = new StringBuilder("{");
    fields.forEach(
        (k, v) -> {
          if (b.length() > 1) {
            b.append(',');
          }
          b.append(quote(k)).append(':');
          b.append(v == null ? "null" : v instanceof String s ? quote(s) : v.toString());
        });
    return b.append('}').toString();
  }

  /** As the text output says it: the store's TTL less what it says is left, never below zero. */
  private static Optional<Long> renewedAgo(LeaseRecord r) {
    return r.expiresIn().map(left -> Math.max(0, r.ttl().minus(left).toMillis()));
  }

  /** A JSON string: quotes, backslashes and every control character escaped (RFC 8259). */
  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
