package dev.baton.election;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * One phase of a {@link Campaign}: stopped, following, leading or stopping. A phase object lives
 * from its {@link #enter()} to its {@link #exit()} and owns what belongs to it (timers, the watch,
 * the call in flight); nothing of it outlives its exit except calls already sent, whose outcomes
 * find it inactive and are handled as late.
 *
 * <p>All methods run on the campaign's engine executor.
 */
abstract class Phase {

  enum Kind {
    STOPPED,
    FOLLOWING,
    LEADING,
    STOPPING
  }

  /** Every legal move; {@link Campaign#transition} refuses any other. */
  static final Map<Kind, Set<Kind>> MOVES = new EnumMap<>(Kind.class);

  static {
    MOVES.put(Kind.STOPPED, EnumSet.of(Kind.FOLLOWING));
    MOVES.put(Kind.FOLLOWING, EnumSet.of(Kind.LEADING, Kind.STOPPING));
    MOVES.put(Kind.LEADING, EnumSet.of(Kind.FOLLOWING, Kind.STOPPING));
    MOVES.put(Kind.STOPPING, EnumSet.of(Kind.STOPPED));
  }

  static boolean legal(Kind from, Kind to) {
    return MOVES.get(from).contains(to);
  }

  private boolean active;

  abstract Kind kind();

  /** True between enter and exit: outcomes that arrive when it is false are late. */
  final boolean isActive() {
    return active;
  }

  final void entered() {
    active = true;
    enter();
  }

  final void exited() {
    active = false;
    exit();
  }

  /** Starts what the phase does: a first attempt, a renewal, waiting for the callbacks. */
  void enter() {}

  /** Cancels what the phase owns. */
  void exit() {}

  /** The stopped phase: nothing runs, nothing is held. */
  static final class Stopped extends Phase {
    @Override
    Kind kind() {
      return Kind.STOPPED;
    }
  }
}
