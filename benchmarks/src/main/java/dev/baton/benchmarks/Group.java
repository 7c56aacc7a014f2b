package dev.baton.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The candidates of one contender campaigning for one election. A node that left or was cut off is
 * replaced by a fresh one (new client, new proxy), so every round starts with the same number of
 * live candidates; the old one is closed in the background.
 */
final class Group implements AutoCloseable {

  /** How long a replacement gets to register before the next round starts. */
  static final Duration SETTLE = Duration.ofMillis(200);

  private final Contender contender;
  private final String election;
  private final String prefix;
  private final Timeline timeline = new Timeline();
  private final List<Node> nodes = new ArrayList<>();
  private final ExecutorService closer =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "bench-closer");
            t.setDaemon(true);
            return t;
          });
  private final List<Future<?>> closing = new ArrayList<>();
  private final List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
  private int serial;

  private Group(Contender contender, String election, String prefix) {
    this.contender = contender;
    this.election = election;
    this.prefix = prefix;
  }

  static Group start(Contender contender, String election, String prefix, int size)
      throws Exception {
    Group g = new Group(contender, election, prefix);
    try {
      for (int i = 0; i < size; i++) {
        g.add().start();
      }
    } catch (Exception | Error e) {
      g.close();
      throw e;
    }
    return g;
  }

  Timeline timeline() {
    return timeline;
  }

  List<Node> nodes() {
    return List.copyOf(nodes);
  }

  List<String> problems() {
    synchronized (problems) {
      return List.copyOf(problems);
    }
  }

  private Node add() throws Exception {
    Node n = contender.newNode(election, prefix + "-n" + (++serial), timeline);
    nodes.add(n);
    return n;
  }

  /** The one node that believes it leads, once exactly one does; fails after {@code timeout}. */
  Node awaitSingleLeader(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Node leader = null;
      int leaders = 0;
      for (Node n : nodes) {
        if (n.believesLeader()) {
          leaders++;
          leader = n;
        }
      }
      if (leaders == 1) {
        return leader;
      }
      if (System.nanoTime() - deadline >= 0) {
        throw new IllegalStateException(
            contender.name()
                + ": "
                + leaders
                + " of "
                + nodes.size()
                + " nodes believed they led after "
                + timeout.toSeconds()
                + " s (expected exactly one)");
      }
      Pause.millis(5);
    }
  }

  /** Replaces {@code old} (already left or cut off) by a fresh candidate and lets it settle. */
  Node replace(Node old) throws Exception {
    nodes.remove(old);
    closeLater(old);
    Node fresh = add();
    fresh.start();
    settle(fresh);
    return fresh;
  }

  /**
   * Waits until {@code n} follows: Baton nodes until they know the leader, then a short pause for
   * all.
   */
  void settle(Node n) {
    if (n instanceof BatonNode) {
      BatonNode b = (BatonNode) n;
      Pause.until(() -> b.knowsLeader() || b.believesLeader(), Duration.ofSeconds(5));
    }
    Pause.of(SETTLE);
  }

  void closeLater(Node n) {
    closing.add(
        closer.submit(
            () -> {
              try {
                n.close();
              } catch (Exception e) {
                problems.add("closing " + n + " failed: " + e);
              }
              return null;
            }));
  }

  @Override
  public void close() {
    for (Node n : List.copyOf(nodes)) {
      closeLater(n);
    }
    nodes.clear();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (Future<?> f : closing) {
      try {
        f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        problems.add("a node did not finish closing within 30 s");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (java.util.concurrent.ExecutionException e) {
        problems.add("closing a node failed: " + e.getCause());
      }
    }
    closing.clear();
    closer.shutdownNow();
  }
}
