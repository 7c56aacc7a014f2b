package dev.baton.zookeeper;

import java.time.Duration;

/**
 * When the ZooKeeper client pings. Its send thread pings a connection that has sent nothing for
 * half its read timeout (two thirds of the negotiated session timeout), less a second once that
 * half is over a second, and at least every 10 s; this is ZooKeeper 3.9's {@code ClientCnxn}. Any
 * request sent resets that count, so a request sent just before a ping is due replaces the ping.
 */
final class SessionPings {

  /** How much earlier than the ping a renewal is asked for, in ms: room for a late timer. */
  private static final long MARGIN_MILLIS = 25;

  private static final long MAX_PING_INTERVAL_MILLIS = 10_000;

  private SessionPings() {}

  /** How long the client lets a connection with session timeout {@code session} send nothing. */
  static Duration idleBeforePing(Duration session) {
    return Duration.ofMillis(idleBeforePingMillis(session.toMillis()));
  }

  /** A renewal period that sends each renewal before the ping it replaces is due. */
  static Duration renewalPeriod(Duration session) {
    // In milliseconds: a new term asks for this on its way to onElected, uncompiled, and Duration
    // arithmetic (multipliedBy goes through BigDecimal) costs tens of microseconds there.
    long idle = idleBeforePingMillis(session.toMillis());
    return Duration.ofMillis(idle > 2 * MARGIN_MILLIS ? idle - MARGIN_MILLIS : idle);
  }

  private static long idleBeforePingMillis(long sessionMillis) {
    long halfReadTimeout = sessionMillis * 2 / 3 / 2;
    long idle = halfReadTimeout <= 1000 ? halfReadTimeout : Math.max(1000, halfReadTimeout - 1000);
    return Math.min(idle, MAX_PING_INTERVAL_MILLIS);
  }
}
