package dev.baton.jdbc;

import dev.baton.election.Lease;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A guarded write on a thread of its own that holds its lease's row locked until {@link #finish()},
 * or for at most {@code atMost}: what a leader's long write looks like to the rest of the store.
 */
final class RowHeldByAGuardedWrite implements AutoCloseable {

  private final CountDownLatch writing = new CountDownLatch(1);
  private final CountDownLatch finish = new CountDownLatch(1);
  private final ExecutorService writer = Executors.newSingleThreadExecutor();
  private final Future<String> write;

  private RowHeldByAGuardedWrite(JdbcLeaseStore store, Lease lease, Duration atMost) {
    write =
        writer.submit(
            () ->
                store.inTerm(
                    lease,
                    dsl -> {
                      writing.countDown();
                      try {
                        finish.await(atMost.toMillis(), TimeUnit.MILLISECONDS);
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted in the guarded write", e);
                      }
                      return "written";
                    }));
  }

  /** Returns once the write holds the row (within ten seconds), or fails. */
  static RowHeldByAGuardedWrite start(JdbcLeaseStore store, Lease lease, Duration atMost)
      throws InterruptedException {
    RowHeldByAGuardedWrite held = new RowHeldByAGuardedWrite(store, lease, atMost);
    if (!held.writing.await(10, TimeUnit.SECONDS)) {
      held.close();
      throw new IllegalStateException("the guarded write did not start within 10 s");
    }
    return held;
  }

  /** Whether the write still holds the row: neither finished nor timed out. */
  boolean stillHeld() {
    return finish.getCount() == 1 && !write.isDone();
  }

  /** Lets the write commit and returns what it returned ("written"). */
  String finish() throws Exception {
    finish.countDown();
    return write.get(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    finish.countDown();
    writer.shutdownNow();
  }
}
