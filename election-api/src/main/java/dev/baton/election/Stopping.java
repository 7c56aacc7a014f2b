package dev.baton.election;

/**
 * Stopping: the term (if any) has ended and its release is queued behind its callbacks. Stopped
 * once every callback queued before this phase began has run and no store call of this elector is
 * still out, so nothing of a closed elector reaches the store after {@link Elector#close()}
 * returns.
 */
final class Stopping extends Phase {

  private final Campaign c;
  private boolean callbacksDone;

  Stopping(Campaign c) {
    this.c = c;
  }

  @Override
  Kind kind() {
    return Kind.STOPPING;
  }

  @Override
  void enter() {
    c.callbacks.execute(
        () ->
            c.engine.execute(
                () -> {
                  callbacksDone = true;
                  finishIfIdle();
                }));
  }

  void finishIfIdle() {
    if (isActive() && callbacksDone && c.storeIdle()) {
      c.stopped();
    }
  }
}
