package dev.baton.election;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes the electors that asked for it when the JVM shuts down (SIGTERM, Ctrl-C, the end of {@code
 * main} with no other thread left, {@code System.exit}): a replica that is stopped then releases
 * its lease and another takes over in milliseconds, not after the lease runs out.
 *
 * <p>One hook for the whole process, registered on first use, and a set of the electors between
 * {@code start()} and {@code close()}: a closed elector leaves the set, so the hook never keeps one
 * reachable, and ten thousand electors do not mean ten thousand hook threads.
 */
final class ShutdownRelease {

  private static final Logger log = LoggerFactory.getLogger(ShutdownRelease.class);

  /**
   * Parallel closes at shutdown: a release is one short call, and a few threads keep that quick.
   */
  private static final int MAX_THREADS = 16;

  private static final Set<Elector> OPEN = ConcurrentHashMap.newKeySet();
  private static final AtomicBoolean HOOKED = new AtomicBoolean();

  private ShutdownRelease() {}

  /** From {@code start()}: close {@code elector} when the JVM shuts down. */
  static void register(Elector elector) {
    if (HOOKED.compareAndSet(false, true)) {
      try {
        Runtime.getRuntime()
            .addShutdownHook(new Thread(ShutdownRelease::closeAll, "baton-shutdown"));
      } catch (IllegalStateException shuttingDown) {
        // Started while the JVM is already on its way out: there is no shutdown left to hook.
        return;
      }
    }
    OPEN.add(elector);
  }

  /** From {@code close()}: closed by its owner, it needs nothing at shutdown. */
  static void unregister(Elector elector) {
    OPEN.remove(elector);
  }

  /**
   * Closes every registered elector, several at once, and waits for them at most the longest lease
   * duration among them: by then every lease has run out by itself, and a release could not hand
   * over any sooner.
   */
  static void closeAll() {
    List<Elector> electors = List.copyOf(OPEN);
    if (electors.isEmpty()) {
      return;
    }
    Duration longest = Duration.ZERO;
    List<Callable<Void>> closes = new ArrayList<>();
    for (Elector e : electors) {
      longest = e.leaseDuration().compareTo(longest) > 0 ? e.leaseDuration() : longest;
      closes.add(
          () -> {
            e.close();
            return null;
          });
    }
    AtomicInteger count = new AtomicInteger();
    ExecutorService threads =
        Executors.newFixedThreadPool(
            Math.min(MAX_THREADS, electors.size()),
            r -> {
              Thread t = new Thread(r, "baton-shutdown-" + count.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    try {
      log.debug("JVM shutdown: closing {} elector(s) to release their leases", electors.size());
      threads.invokeAll(closes, longest.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      threads.shutdownNow();
    }
  }
}
