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
import java.util.HashMap;
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
 * shared leases) and confirms its keys in read-only transactions of up to {@link
 * KeyReads#MAX_BATCH} comparisons each, all at once; only a transaction whose comparisons fail
 * brings the keys back, to say which election was lost and to whom.
 */
final class Renewals {

  private static final TxnOption READ_ONLY = TxnOption.builder().withAutoRetry().build();

  private final KV kv;
  private final EtcdLeases leases;
  private final KeyReads keyReads;
  private final MonotonicClock clock;
  private final long callTimeoutNanos;
  private final long sharingNanos;
  private final Function<String, ByteSequence> keyOf;

  Renewals(KV kv, EtcdLeases leases, KeyReads keyReads, MonotonicClock clock, long callTimeoutNanos, long sharingNanos, Function<String, ByteSequence> keyOf) {
    this.kv = kv;
    this.leases = leases;
    this.keyReads = keyReads;
    this.clock = clock;
    this.callTimeoutNanos = callTimeoutNanos;
    this.sharingNanos = sharingNanos;
    this.keyOf = keyOf;
  }

  Lease renew(Lease lease) {
    long started = clock.nanoTime();
    long deadline = started + callTimeoutNanos;
    EtcdLease held = heldLease(lease);
    CompletableFuture<Void> alive = held.keepAlive(started, sharingNanos);
    CompletableFuture<Seen> current =
        Calls.retryingAuth(() -> keyReads.read(keyOf.apply(lease.election()))).thenApply(kv -> new Seen(kv.orElse(null), false));
    awaitAll(List.of(alive, current), deadline, lease.election());
    return outcome(lease, held, current, alive);
  }

  List<Renewal> renewAll(List<Lease> batch) {
    long started = clock.nanoTime();
    long deadline = started + callTimeoutNanos;
    List<Renewal> outcomes = new ArrayList<>(batch.size());
    if (batch.isEmpty()) {
      return outcomes;
    }
    // The lease each election is on, and one keep-alive per distinct etcd lease.
    EtcdLease[] held = new EtcdLease[batch.size()];
    Map<EtcdLease, CompletableFuture<Void>> keepAlives = new IdentityHashMap<>();
    RuntimeException[] refused = new RuntimeException[batch.size()];
    List<Integer> toConfirm = new ArrayList<>(batch.size());
    for (int i = 0; i < batch.size(); i++) {
      try {
        held[i] = heldLease(batch.get(i));
        keepAlives.computeIfAbsent(held[i], l -> l.keepAlive(started, sharingNanos));
        toConfirm.add(i);
      } catch (RuntimeException e) {
        refused[i] = e;
      }
    }
    // The keys, in read-only transactions that compare each key's mod_revision with its token.
    List<CompletableFuture<Seen>> current = new ArrayList<>(batch.size());
    for (int i = 0; i < batch.size(); i++) {
      current.add(null);
    }
    List<CompletableFuture<?>> pending = new ArrayList<>(keepAlives.values());
    for (int from = 0; from < toConfirm.size(); from += KeyReads.MAX_BATCH) {
      List<Integer> chunk = toConfirm.subList(from, Math.min(toConfirm.size(), from + KeyReads.MAX_BATCH));
      Map<Integer, CompletableFuture<Seen>> confirmed = confirm(batch, chunk);
      confirmed.forEach(current::set);
      pending.addAll(confirmed.values());
    }
    awaitAll(pending, deadline, batch.get(0).election());
    for (int i = 0; i < batch.size(); i++) {
      if (refused[i] != null) {
        outcomes.add(Renewal.failed(refused[i]));
        continue;
      }
      try {
        outcomes.add(Renewal.renewed(outcome(batch.get(i), held[i], current.get(i), keepAlives.get(held[i]))));
      } catch (RuntimeException e) {
        outcomes.add(Renewal.failed(e));
      }
    }
    return outcomes;
  }

  /**
   * One transaction for a chunk of the batch: succeeds, with nothing to carry back, when every key
   * still shows its token; otherwise its else branch reads every key of the chunk.
   */
  private Map<Integer, CompletableFuture<Seen>> confirm(List<Lease> batch, List<Integer> chunk) {
    Cmp[] sameTerm = new Cmp[chunk.size()];
    Op[] reads = new Op[chunk.size()];
    for (int j = 0; j < chunk.size(); j++) {
      Lease lease = batch.get(chunk.get(j));
      ByteSequence key = keyOf.apply(lease.election());
      sameTerm[j] = new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(lease.token().value()));
      reads[j] = Op.get(key, GetOption.DEFAULT);
    }
    CompletableFuture<TxnResponse> sent =
        Calls.retryingAuth(() -> kv.txn(READ_ONLY).If(sameTerm).Else(reads).commit()).orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS);
    Map<Integer, CompletableFuture<Seen>> byIndex = new HashMap<>();
    for (int j = 0; j < chunk.size(); j++) {
      int position = j;
      byIndex.put(
          chunk.get(j),
          sent.thenApply(
              response -> {
                if (response.isSucceeded()) {
                  return Seen.SAME_TERM;
                }
                GetResponse get = response.getGetResponses().get(position);
                return new Seen(get.getKvs().isEmpty() ? null : get.getKvs().get(0), false);
              }));
    }
    return byIndex;
  }

  /** What a read showed of a key: that it still shows the renewal's term, or the key (null: gone). */
  private record Seen(KeyValue kv, boolean sameTerm) {
    static final Seen SAME_TERM = new Seen(null, true);
  }

  private EtcdLease heldLease(Lease lease) {
    long leaseId = leaseId(lease);
    return leases
        .byId(leaseId)
        .orElseThrow(() -> lost(lease, "its etcd lease " + Long.toHexString(leaseId) + " expired, was revoked or was released", null));
  }

  /** The renewal's outcome once both parts are done or the deadline passed. */
  private Lease outcome(Lease lease, EtcdLease held, CompletableFuture<Seen> current, CompletableFuture<Void> alive) {
    String election = lease.election();
    long token = lease.token().value();
    // A definite answer about the key or the lease decides, even if the other part failed.
    if (current.isDone() && !current.isCompletedExceptionally() && !current.join().sameTerm()) {
      KeyValue found = current.join().kv();
      if (found == null) {
        leases.forget(held.id, election, token);
        throw lost(lease, "its key was deleted (expired or released)", null);
      }
      if (found.getModRevision() != token || found.getLease() != held.id || !found.getValue().equals(ByteSequence.from(lease.candidate(), UTF_8))) {
        leases.forget(held.id, election, token);
        if (ReleaseMarker.isMarker(found)) {
          throw lost(lease, "its key was released (token " + found.getModRevision() + ")", null);
        }
        String holder = found.getValue().toString(UTF_8);
        throw lost(lease, "the key now holds " + holder + " (token " + found.getModRevision() + ")", holder);
      }
    }
    if (alive.isCompletedExceptionally() && EtcdErrors.isLeaseNotFound(Calls.failure(alive))) {
      leases.lost(held);
      throw lost(lease, "its etcd lease " + Long.toHexString(held.id) + " expired", null);
    }
    settled(current, election, "reading the election key");
    settled(alive, election, "keeping the etcd lease alive");
    return lease;
  }

  /** Throws what went wrong with a part that did not succeed by the deadline. */
  private void settled(CompletableFuture<?> part, String election, String what) {
    if (!part.isDone()) {
      throw new LeaseStoreException(election, what + ": etcd did not answer within the call timeout of " + Duration.ofNanos(callTimeoutNanos));
    }
    if (part.isCompletedExceptionally()) {
      Throwable cause = Calls.failure(part);
      throw new LeaseStoreException(election, what + " failed: " + cause.getMessage(), cause);
    }
  }

  private void awaitAll(List<? extends CompletableFuture<?>> parts, long deadline, String election) {
    try {
      CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).get(Math.max(0, deadline - clock.nanoTime()), TimeUnit.NANOSECONDS);
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
      throw lost(lease, "its handle '" + lease.handle() + "' is not an etcd lease id of this store", null);
    }
  }

  static LeaseLostException lost(Lease lease, String why, String holder) {
    return new LeaseLostException(
        lease.election(), "lease of " + lease.candidate() + " (token " + lease.token() + ") is gone: " + why, holder);
  }
}
