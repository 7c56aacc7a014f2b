package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.election.Renewal;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.TxnOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Renewals: a keep-alive of the etcd lease each election is on, sent together with a read that
 * confirms each key still shows its holder's term. The keep-alive alone would not do: a key deleted
 * by hand while its lease lives could be somebody else's by now. The key decides first: a key that
 * shows another term makes the renewal lost even when the keep-alive could not get through.
 *
 * <p>A batch ({@link #renewAll}) sends one keep-alive per distinct etcd lease (one in all with
 * shared leases) and confirms its keys in read-only transactions of up to the cluster's {@code
 * --max-txn-ops} comparisons each, all at once. Those carry no reads: only when a transaction's
 * comparisons fail (something was lost) are its keys read, to say which election was lost and to
 * whom.
 */
final class Renewals {

  private static final TxnOption READ_ONLY = TxnOption.builder().withAutoRetry().build();

  private final KV kv;
  private final EtcdLeases leases;
  private final KeyReads keyReads;
  private final MonotonicClock clock;
  private final long callTimeoutNanos;
  private final long sharingNanos;
  private final int maxTxnOps;
  private final Function<String, ByteSequence> keyOf;

  Renewals(
      KV kv,
      EtcdLeases leases,
      KeyReads keyReads,
      MonotonicClock clock,
      long callTimeoutNanos,
      long sharingNanos,
      int maxTxnOps,
      Function<String, ByteSequence> keyOf) {
    this.kv = kv;
    this.leases = leases;
    this.keyReads = keyReads;
    this.clock = clock;
    this.callTimeoutNanos = callTimeoutNanos;
    this.sharingNanos = sharingNanos;
    this.maxTxnOps = maxTxnOps;
    this.keyOf = keyOf;
  }

  Lease renew(Lease lease) {
    long started = clock.nanoTime();
    long deadline = started + callTimeoutNanos;
    EtcdLease held = heldLease(lease);
    CompletableFuture<Void> alive = held.keepAlive(started, sharingNanos);
    CompletableFuture<Seen> current =
        Calls.retryingAuth(() -> keyReads.read(keyOf.apply(lease.election())))
            .thenApply(kv -> new Seen(kv.orElse(null), false));
    awaitAll(List.of(alive, current), deadline, lease.election());
    return outcome(lease, held, settledOrNull(current), current, alive);
  }

  List<Renewal> renewAll(List<Lease> batch) {
    long started = clock.nanoTime();
    long deadline = started + callTimeoutNanos;
    List<Renewal> outcomes = new ArrayList<>(batch.size());
    if (batch.isEmpty()) {
      return outcomes;
    }
    // The lease each election is on, and one keep-alive per distinct etcd lease.
    int n = batch.size();
    EtcdLease[] held = new EtcdLease[n];
    Map<EtcdLease, CompletableFuture<Void>> keepAlives = new IdentityHashMap<>();
    RuntimeException[] refused = new RuntimeException[n];
    int[] toConfirm = new int[n];
    int confirming = 0;
    for (int i = 0; i < n; i++) {
      try {
        held[i] = heldLease(batch.get(i));
        keepAlives.computeIfAbsent(held[i], l -> l.keepAlive(started, sharingNanos));
        toConfirm[confirming++] = i;
      } catch (RuntimeException e) {
        refused[i] = e;
      }
    }
    // The keys, in read-only transactions that compare each key's mod_revision with its token.
    ByteSequence[] keys = new ByteSequence[n];
    Chunk[] chunkOf = new Chunk[n];
    List<Chunk> chunks = new ArrayList<>();
    List<CompletableFuture<?>> pending = new ArrayList<>(keepAlives.values());
    for (int from = 0; from < confirming; from += maxTxnOps) {
      int to = Math.min(confirming, from + maxTxnOps);
      Cmp[] sameTerm = new Cmp[to - from];
      for (int j = from; j < to; j++) {
        int i = toConfirm[j];
        keys[i] = keyOf.apply(batch.get(i).election());
        sameTerm[j - from] =
            new Cmp(keys[i], Cmp.Op.EQUAL, CmpTarget.modRevision(batch.get(i).token().value()));
      }
      Chunk chunk =
          new Chunk(
              from,
              to,
              Calls.retryingAuth(() -> kv.txn(READ_ONLY).If(sameTerm).commit())
                  .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS));
      for (int j = from; j < to; j++) {
        chunkOf[toConfirm[j]] = chunk;
      }
      chunks.add(chunk);
      pending.add(chunk.compared);
    }
    awaitAll(pending, deadline, batch.get(0).election());
    // Only a chunk whose comparisons failed (something was lost) reads its keys, to say which.
    List<CompletableFuture<?>> rereads = new ArrayList<>();
    for (Chunk chunk : chunks) {
      if (chunk.lostSome()) {
        Op[] gets = new Op[chunk.to - chunk.from];
        for (int j = chunk.from; j < chunk.to; j++) {
          gets[j - chunk.from] = Op.get(keys[toConfirm[j]], GetOption.DEFAULT);
        }
        chunk.reread =
            Calls.retryingAuth(() -> kv.txn(READ_ONLY).Then(gets).commit())
                .orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS);
        rereads.add(chunk.reread);
      }
    }
    if (!rereads.isEmpty()) {
      awaitAll(rereads, deadline, batch.get(0).election());
    }
    int[] positionInChunk = new int[n];
    for (int j = 0; j < confirming; j++) {
      positionInChunk[toConfirm[j]] = j - chunkOf[toConfirm[j]].from;
    }
    for (int i = 0; i < n; i++) {
      if (refused[i] != null) {
        outcomes.add(Renewal.failed(refused[i]));
        continue;
      }
      Chunk chunk = chunkOf[i];
      try {
        outcomes.add(
            Renewal.renewed(
                outcome(
                    batch.get(i),
                    held[i],
                    chunk.seen(positionInChunk[i]),
                    chunk.keyPart(),
                    keepAlives.get(held[i]))));
      } catch (RuntimeException e) {
        outcomes.add(Renewal.failed(e));
      }
    }
    return outcomes;
  }

  /**
   * The keys of positions {@code from} to {@code to} of a batch: one transaction comparing them,
   * and one reading them when that comparison failed.
   */
  private static final class Chunk {
    final int from;
    final int to;
    final CompletableFuture<TxnResponse> compared;
    CompletableFuture<TxnResponse> reread;

    Chunk(int from, int to, CompletableFuture<TxnResponse> compared) {
      this.from = from;
      this.to = to;
      this.compared = compared;
    }

    /** etcd answered, and not every key showed its token. */
    boolean lostSome() {
      TxnResponse response = settledOrNull(compared);
      return response != null && !response.isSucceeded();
    }

    /** What the chunk showed of the key at {@code position}; null when etcd did not answer. */
    Seen seen(int position) {
      if (reread == null) {
        TxnResponse response = settledOrNull(compared);
        return response != null && response.isSucceeded() ? Seen.SAME_TERM : null;
      }
      TxnResponse read = settledOrNull(reread);
      if (read == null) {
        return null;
      }
      GetResponse get = read.getGetResponses().get(position);
      return new Seen(get.getKvs().isEmpty() ? null : get.getKvs().get(0), false);
    }

    /** The call whose failure explains a missing answer. */
    CompletableFuture<?> keyPart() {
      return reread != null ? reread : compared;
    }
  }

  private static <T> T settledOrNull(CompletableFuture<T> part) {
    return part.isDone() && !part.isCompletedExceptionally() ? part.join() : null;
  }

  /**
   * What a read showed of a key: that it still shows the renewal's term, or the key (null: gone).
   */
  private record Seen(KeyValue kv, boolean sameTerm) {
    static final Seen SAME_TERM = new Seen(null, true);
  }

  private EtcdLease heldLease(Lease lease) {
    long leaseId = leaseId(lease);
    return leases
        .byId(leaseId)
        .orElseThrow(
            () ->
                lost(
                    lease,
                    "its etcd lease "
                        + Long.toHexString(leaseId)
                        + " expired, was revoked or was released",
                    null));
  }

  /**
   * The renewal's outcome once both parts are done or the deadline passed.
   *
   * @param seen what the key part showed; null when it did not answer, which {@code keyPart} says
   */
  private Lease outcome(
      Lease lease,
      EtcdLease held,
      Seen seen,
      CompletableFuture<?> keyPart,
      CompletableFuture<Void> alive) {
    String election = lease.election();
    long token = lease.token().value();
    // A definite answer about the key or the lease decides, even if the other part failed.
    if (seen != null && !seen.sameTerm()) {
      KeyValue found = seen.kv();
      if (found == null) {
        leases.forget(held.id, election, token);
        throw lost(lease, "its key was deleted (expired or released)", null);
      }
      if (found.getModRevision() != token
          || found.getLease() != held.id
          || !found.getValue().equals(ByteSequence.from(lease.candidate(), UTF_8))) {
        leases.forget(held.id, election, token);
        if (ReleaseMarker.isMarker(found)) {
          throw lost(lease, "its key was released (token " + found.getModRevision() + ")", null);
        }
        String holder = found.getValue().toString(UTF_8);
        throw lost(
            lease,
            "the key now holds " + holder + " (token " + found.getModRevision() + ")",
            holder);
      }
    }
    if (alive.isCompletedExceptionally() && EtcdErrors.isLeaseNotFound(Calls.failure(alive))) {
      leases.lost(held);
      throw lost(lease, "its etcd lease " + Long.toHexString(held.id) + " expired", null);
    }
    if (seen == null) {
      settled(keyPart, election, "reading the election key");
    }
    settled(alive, election, "keeping the etcd lease alive");
    return lease;
  }

  /** Throws what went wrong with a part that did not succeed by the deadline. */
  private void settled(CompletableFuture<?> part, String election, String what) {
    if (!part.isDone()) {
      throw new LeaseStoreException(
          election,
          what
              + ": etcd did not answer within the call timeout of "
              + Duration.ofNanos(callTimeoutNanos));
    }
    if (part.isCompletedExceptionally()) {
      Throwable cause = Calls.failure(part);
      if (EtcdErrors.isTooManyOps(cause)) {
        throw new LeaseStoreException(
            election,
            what
                + " failed: etcd refused a transaction of up to "
                + maxTxnOps
                + " operations ("
                + cause.getMessage()
                + "); "
                + EtcdLeaseStoreProvider.MAX_TXN_OPS
                + " must be at most the cluster's --max-txn-ops",
            cause);
      }
      throw new LeaseStoreException(election, what + " failed: " + cause.getMessage(), cause);
    }
  }

  private void awaitAll(
      List<? extends CompletableFuture<?>> parts, long deadline, String election) {
    try {
      CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
          .get(Math.max(0, deadline - clock.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // Each part's own outcome is read and reported per lease.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseStoreException(election, "renewal interrupted", e);
    }
  }

  static long leaseId(Lease lease) {
    try {
      return Long.parseLong(lease.handle());
    } catch (NumberFormatException e) {
      throw lost(
          lease, "its handle '" + lease.handle() + "' is not an etcd lease id of this store", null);
    }
  }

  static LeaseLostException lost(Lease lease, String why, String holder) {
    return new LeaseLostException(
        lease.election(),
        "lease of " + lease.candidate() + " (token " + lease.token() + ") is gone: " + why,
        holder);
  }
}
