package dev.baton.zookeeper;

import static dev.baton.zookeeper.ZooKeeperServers.uniqueElection;
import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * Many candidates in two sessions hammer one election: at no time may two of them hold it, and
 * every grant must carry a higher token than the one before.
 */
class ZooKeeperLeaseStoreFuzzIT {

  private static final int SESSIONS = 2;
  private static final int CANDIDATES_PER_SESSION = 4;
  private static final int ROUNDS = 100;
  private static final Duration TTL = Duration.ofSeconds(2);

  @Test
  void candidatesNeverHoldTheElectionTogetherAndTokensOnlyGrow() throws Exception {
    try (ZooKeeperServers servers = new ZooKeeperServers()) {
      TestingServer server = servers.server();
      String election = uniqueElection("fuzz");
      List<ZooKeeperLeaseStore> stores = new ArrayList<>();
      for (int i = 0; i < SESSIONS; i++) {
        CuratorFramework client =
            servers.client(server.getConnectString(), ZooKeeperServers.MAX_SESSION);
        ZooKeeperLeaseStore store = ZooKeeperLeaseStore.builder(client).build();
        servers.closeLater(store);
        stores.add(store);
      }

      AtomicInteger holders = new AtomicInteger();
      AtomicInteger mostHoldersAtOnce = new AtomicInteger();
      // Appended only by the one candidate that holds the election, so in grant order.
      List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
      ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
      CountDownLatch start = new CountDownLatch(1);
      ExecutorService threads = Executors.newFixedThreadPool(SESSIONS * CANDIDATES_PER_SESSION);
      List<Future<Integer>> grantsPerCandidate = new ArrayList<>();
      try {
        for (int s = 0; s < SESSIONS; s++) {
          for (int c = 0; c < CANDIDATES_PER_SESSION; c++) {
            ZooKeeperLeaseStore store = stores.get(s);
            String candidate = "s" + s + "-c" + c;
            grantsPerCandidate.add(
                threads.submit(
                    () -> {
                      start.await();
                      int grants = 0;
                      for (int round = 0; round < ROUNDS; round++) {
                        Acquisition acquisition = store.tryAcquire(election, candidate, TTL);
                        if (acquisition.isGranted()) {
                          grants++;
                          lead(
                              store,
                              acquisition.lease().orElseThrow(),
                              holders,
                              mostHoldersAtOnce,
                              tokens,
                              violations);
                        }
                      }
                      return grants;
                    }));
          }
        }
        start.countDown();
        int totalGrants = 0;
        for (Future<Integer> grants : grantsPerCandidate) {
          totalGrants += grants.get(2, TimeUnit.MINUTES);
        }

        assertThat(violations).isEmpty();
        assertThat(mostHoldersAtOnce.get()).isEqualTo(1);
        assertThat(tokens).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
        assertThat(tokens.size())
            .isGreaterThanOrEqualTo(totalGrants)
            .isGreaterThan(SESSIONS * CANDIDATES_PER_SESSION);
      } finally {
        threads.shutdownNow();
        assertThat(threads.awaitTermination(30, TimeUnit.SECONDS))
            .as("candidate threads stopped")
            .isTrue();
      }
    }
  }

  /**
   * Holds the election for a moment: renews, sometimes asks for it again (and is refused), then
   * lets go.
   */
  private static void lead(
      ZooKeeperLeaseStore store,
      Lease lease,
      AtomicInteger holders,
      AtomicInteger mostHoldersAtOnce,
      List<Long> tokens,
      ConcurrentLinkedQueue<String> violations) {
    int now = holders.incrementAndGet();
    mostHoldersAtOnce.accumulateAndGet(now, Math::max);
    Lease current = lease;
    try {
      tokens.add(current.token().value());
      Lease renewed = store.renew(current);
      if (!renewed.token().equals(current.token())) {
        violations.add("renewal changed token " + current.token() + " to " + renewed.token());
      }
      if (ThreadLocalRandom.current().nextInt(4) == 0) {
        // A live lease is never granted again, not even to its holder's id: refused, naming it.
        Acquisition again = store.tryAcquire(current.election(), current.candidate(), TTL);
        if (again.isGranted()
            || !again.holder().orElseThrow().token().equals(current.token())
            || !again.holder().orElseThrow().holder().equals(current.candidate())) {
          violations.add(
              current.candidate() + " holding token " + current.token() + " was answered " + again);
          again.lease().ifPresent(store::release);
        }
      }
    } finally {
      // Count ourselves out before letting go, so the next holder never overlaps with us.
      holders.decrementAndGet();
      store.release(current);
    }
  }
}
