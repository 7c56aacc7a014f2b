package dev.baton.spring.boot;

import dev.baton.election.Elector;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

/**
 * Starts every {@link Elector} bean once the context is refreshed, and closes them (leader work
 * stopped, lease released) when it closes: lifecycle beans stop before any bean is destroyed, so
 * the {@code DataSource} or client the store uses is still open for the release.
 */
final class ElectorLifecycle implements SmartLifecycle {

  /**
   * Start after everything else and stop first, so leadership is handed over as early as possible.
   */
  static final int PHASE = SmartLifecycle.DEFAULT_PHASE;

  private final ObjectProvider<Elector> electors;
  private final List<Elector> started = new ArrayList<>();

  ElectorLifecycle(ObjectProvider<Elector> electors) {
    this.electors = electors;
  }

  @Override
  public synchronized void start() {
    for (Elector e : electors.orderedStream().toList()) {
      e.start();
      started.add(e);
    }
  }

  @Override
  public synchronized void stop() {
    for (int i = started.size() - 1; i >= 0; i--) {
      started.get(i).close();
    }
    started.clear();
  }

  @Override
  public synchronized boolean isRunning() {
    return !started.isEmpty();
  }

  @Override
  public int getPhase() {
    return PHASE;
  }
}
