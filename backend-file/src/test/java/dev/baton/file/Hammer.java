package dev.baton.file;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * A candidate in a process of its own, for {@link FileLeaseStoreProcessesIT}: {@code churn} takes
 * the lease, renews it zero to two times and releases it, as fast as it can; {@code hold} takes it
 * and renews it every third of its TTL until it is lost. Every step goes to its own log, with the
 * host's monotonic time, which all processes share:
 *
 * <pre>
 * grant TOKEN GRANTED_AT EXPIRES_AT   (the lease is ours from GRANTED_AT, at most until EXPIRES_AT)
 * renew TOKEN EXPIRES_AT
 * release TOKEN STARTED_AT            (ours no longer from STARTED_AT)
 * lost TOKEN
 * </pre>
 */
public final class Hammer {

  private Hammer() {}

  public static void main(String[] args) throws IOException {
    Path directory = Path.of(args[0]);
    String election = args[1];
    String mode = args[2];
    Path log = Path.of(args[3]);
    Duration ttl = Duration.ofMillis(Long.parseLong(args[4]));
    String candidate = log.getFileName().toString();
    try (FileLeaseStore store = FileLeaseStore.builder(directory).build();
        FileOutputStream out = new FileOutputStream(log.toFile(), true)) {
      if (mode.equals("hold")) {
        hold(store, election, candidate, ttl, out);
      } else {
        churn(store, election, candidate, ttl, out);
      }
    }
  }

  private static void churn(
      FileLeaseStore store, String election, String candidate, Duration ttl, FileOutputStream out)
      throws IOException {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    while (true) {
      Lease lease = acquire(store, election, candidate, ttl, out);
      if (lease == null) {
        LockSupport.parkNanos(random.nextLong(2_000_000));
        continue;
      }
      try {
        for (int i = random.nextInt(3); i > 0; i--) {
          renew(store, lease, out);
        }
        write(out, "release " + lease.token() + " " + System.nanoTime());
        store.release(lease);
      } catch (LeaseLostException e) {
        write(out, "lost " + lease.token());
      } catch (LeaseStoreException e) {
        // a slow call on a busy machine: the lease runs out on its own
      }
    }
  }

  private static void hold(
      FileLeaseStore store, String election, String candidate, Duration ttl, FileOutputStream out)
      throws IOException {
    Lease lease = null;
    while (lease == null) {
      lease = acquire(store, election, candidate, ttl, out);
      LockSupport.parkNanos(ttl.toNanos() / 10);
    }
    while (true) {
      LockSupport.parkNanos(ttl.toNanos() / 3);
      try {
        renew(store, lease, out);
      } catch (LeaseLostException e) {
        write(out, "lost " + lease.token());
        return;
      } catch (LeaseStoreException e) {
        // try again at the next third
      }
    }
  }

  private static Lease acquire(
      FileLeaseStore store, String election, String candidate, Duration ttl, FileOutputStream out)
      throws IOException {
    long start = System.nanoTime();
    Acquisition a;
    try {
      a = store.tryAcquire(election, candidate, ttl);
    } catch (LeaseStoreException e) {
      return null;
    }
    if (a.lease().isEmpty()) {
      return null;
    }
    write(
        out,
        "grant "
            + a.lease().get().token()
            + " "
            + System.nanoTime()
            + " "
            + (start + ttl.toNanos()));
    return a.lease().get();
  }

  private static void renew(FileLeaseStore store, Lease lease, FileOutputStream out)
      throws IOException {
    long start = System.nanoTime();
    store.renew(lease);
    write(out, "renew " + lease.token() + " " + (start + lease.ttl().toNanos()));
  }

  /** One write per line, unbuffered: a SIGKILL loses at most the line not yet written. */
  private static void write(FileOutputStream out, String line) throws IOException {
    out.write((line + "\n").getBytes(UTF_8));
  }
}
