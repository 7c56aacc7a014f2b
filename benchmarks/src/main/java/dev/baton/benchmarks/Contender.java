package dev.baton.benchmarks;

import java.time.Duration;
import java.util.Map;

/**
 * One system under test: Baton's Elector on one backend, or a peer library on the same server.
 * Makes nodes, each with its own client and proxy.
 */
interface Contender extends AutoCloseable {

  /** The row label: {@code PostgreSQL}, {@code Curator LeaderLatch}. */
  String name();

  /** The server it runs on, as the report names it: {@code PostgreSQL 15 at 127.0.0.1:5432}. */
  String server();

  /** {@code Baton} or the peer library and version. */
  String library();

  default boolean isBaton() {
    return library().startsWith("Baton");
  }

  /** The settings the nodes are built with, printed in the report. */
  Map<String, String> settings();

  /** How {@link Node#requestsSent()} counts: what one request is, and where it is counted. */
  String requestsCountedAs();

  /** The lease duration in force (the one a crash failover is judged against). */
  Duration leaseDuration();

  /**
   * A new node, not started, with its own client and proxy; {@code election} names the election.
   */
  Node newNode(String election, String candidate, Timeline timeline) throws Exception;

  /** Stops what the contender started for itself (not the shared servers). */
  @Override
  default void close() throws Exception {}
}
