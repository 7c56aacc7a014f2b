package dev.baton.election;

/** A registration that can be cancelled; closing it twice is harmless. */
@FunctionalInterface
public interface Subscription extends AutoCloseable {

  @Override
  void close();
}
