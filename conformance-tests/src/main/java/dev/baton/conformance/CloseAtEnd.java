package dev.baton.conformance;

import java.util.ArrayList;
import java.util.List;

/**
 * What a test opened, closed in reverse order at its end, every one of them: a close that throws
 * does not leave the rest open (a server process left running would load the machine for every test
 * after it). The first failure is thrown, with the others added to it as suppressed.
 */
public final class CloseAtEnd implements AutoCloseable {

  private final List<AutoCloseable> opened = new ArrayList<>();

  /** Closes {@code resource} at the end, before everything added earlier. */
  public synchronized <T extends AutoCloseable> T add(T resource) {
    opened.add(resource);
    return resource;
  }

  @Override
  public synchronized void close() throws Exception {
    Exception first = null;
    for (int i = opened.size() - 1; i >= 0; i--) {
      try {
        opened.get(i).close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    opened.clear();
    if (first != null) {
      throw first;
    }
  }
}
