package dev.baton.election;

import java.util.Set;

/**
 * Opens a fresh {@link MemoryLeaseStore} for {@code election.backend=memory}. Each store is
 * separate: electors that should compete must share one store object.
 */
public final class MemoryLeaseStoreProvider implements LeaseStoreProvider {

  static final String NAME = "memory";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of();
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    return new MemoryLeaseStore();
  }
}
