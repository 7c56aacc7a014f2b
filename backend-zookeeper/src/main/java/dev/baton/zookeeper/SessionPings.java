package dev.baton.zookeeper;

import java.time.Duration;

/**
 * When the ZooKeeper client pings. Its send thread pings a connection that has sent nothing for
 * half its read timeout (two thirds of the negotiated session timeout), less a second once that
 * half is over a second, and at least every 10 s; this is ZooKeeper 3.9's {@code ClientCnxn}. Any
 * request sent resets that count, so a request sent just before a ping is due replaces the ping.
 */
final class SessionPings {

  /** How much earlier than the ping a renewal is asked for: room for a late timer. */
  static final Duration MARGIN = Duration.ofMillis(25);

  private static final long MAX_PING_INTERVAL_MILLIS = 10_000;

  private SessionPings() {}

  /** How long the client lets a connection with session timeout {@code session} send nothing. */
  static Duration idleBeforePing(Duration session) {
    long halfReadTimeout = session.toMillis() * 2 / 3 / 2;
    long idle = halfReadTimeout <= 1000 ? halfReadTimeout : Math.max(1000, halfReadTimeout - 1000);
    return Duration.ofMillis(Math.min(idle, MAX_PING_INTERVAL_MILLIS));
  }

  /** A renewal period that sends each renewal before the ping it replaces is due. */
  static Duration renewalPeriod(Duration session) {
    Duration idle = idleBeforePing(session);
    return idle.compareTo(MARGIN.multipliedBy(2)) > 0 ? idle.minus(MARGIN) : idle;
  }
}
