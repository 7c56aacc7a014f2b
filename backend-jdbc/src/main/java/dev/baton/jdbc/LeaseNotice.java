package dev.baton.jdbc;

/**
 * The payload of a NOTIFY on a lease table's channel (PostgreSQL): what happened to which
 * elections, and when their leases run out, so that a follower can act on an expiry without asking
 * the database. A payload is
 *
 * <pre>{@code <kind><millis> <length>:<election>[<length>:<election>...]}</pre>
 *
 * where the kind is {@code A} (granted), {@code R} (renewed) or {@code F} (released; no millis),
 * the millis are how long after the notification the leases run out at the earliest (their TTL and
 * margin; the notification arrives after the commit, so a follower that counts from its arrival
 * never counts too early), and each election is prefixed with its length in characters (code
 * points), because an election name may contain any character. A batch renewal lists many elections
 * in one payload, which PostgreSQL limits to 8000 bytes.
 */
final class LeaseNotice {

  enum Kind {
    GRANTED('A'),
    RENEWED('R'),
    RELEASED('F');

    private final char code;

    Kind(char code) {
      this.code = code;
    }

    static Kind of(char code) {
      for (Kind k : values()) {
        if (k.code == code) {
          return k;
        }
      }
      return null;
    }
  }

  /** What a payload says about one election; {@code expiresInMillis} is -1 for a release. */
  @FunctionalInterface
  interface Reader {
    void heard(Kind kind, String election, long expiresInMillis);
  }

  private LeaseNotice() {}

  static String granted(String election, long expiresInMillis) {
    return Kind.GRANTED.code + Long.toString(expiresInMillis) + " " + entry(election);
  }

  static String renewed(String election, long expiresInMillis) {
    return Kind.RENEWED.code + Long.toString(expiresInMillis) + " " + entry(election);
  }

  static String released(String election) {
    return Kind.RELEASED.code + " " + entry(election);
  }

  private static String entry(String election) {
    return election.codePointCount(0, election.length()) + ":" + election;
  }

  /**
   * Hands each election of {@code payload} to {@code reader}.
   *
   * @return false when the payload does not read as a lease notice (another version of the store
   *     may have sent it); what was read before the fault has been handed over
   */
  static boolean read(String payload, Reader reader) {
    if (payload == null || payload.length() < 2) {
      return false;
    }
    Kind kind = Kind.of(payload.charAt(0));
    int space = payload.indexOf(' ');
    if (kind == null || space < 0) {
      return false;
    }
    long millis = -1;
    if (kind != Kind.RELEASED) {
      millis = parseDigits(payload, 1, space);
      if (millis < 0) {
        return false;
      }
    } else if (space != 1) {
      return false;
    }
    int at = space + 1;
    if (at >= payload.length()) {
      return false;
    }
    while (at < payload.length()) {
      int colon = payload.indexOf(':', at);
      long length = colon < 0 ? -1 : parseDigits(payload, at, colon);
      if (length <= 0 || length > LeaseTable.MAX_NAME_LENGTH) {
        return false;
      }
      int end;
      try {
        end = payload.offsetByCodePoints(colon + 1, (int) length);
      } catch (IndexOutOfBoundsException e) {
        return false;
      }
      reader.heard(kind, payload.substring(colon + 1, end), millis);
      at = end;
    }
    return true;
  }

  /** The non-negative number in {@code s[from, to)}, or -1 when it is not one. */
  private static long parseDigits(String s, int from, int to) {
    if (to <= from || to - from > 18) {
      return -1;
    }
    long value = 0;
    for (int i = from; i < to; i++) {
      char ch = s.charAt(i);
      if (ch < '0' || ch > '9') {
        return -1;
      }
      value = value * 10 + (ch - '0');
    }
    return value;
  }
}
