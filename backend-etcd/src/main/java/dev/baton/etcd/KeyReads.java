package dev.baton.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.TxnOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Linearizable reads of election keys, batched: while one read is in flight, the keys asked for
 * meanwhile are collected and read together in the next transaction (group commit). Renewals of
 * many elections thus cost a few transactions, not one each, and an idle store pays no delay.
 *
 * <p>Every key is read by a request sent after it was asked for, so a read always shows the key as
 * it was at some point after the caller started.
 */
final class KeyReads {

  private static final TxnOption READ_ONLY = TxnOption.builder().withAutoRetry().build();

  private record Pending(ByteSequence key, CompletableFuture<Optional<KeyValue>> result) {}

  private final KV kv;
  private final long callTimeoutNanos;

  /** The most keys one transaction reads: the cluster's {@code --max-txn-ops}. */
  private final int maxBatch;

  private final Queue<Pending> queue = new ArrayDeque<>();
  private boolean sending;

  KeyReads(KV kv, long callTimeoutNanos, int maxBatch) {
    this.kv = kv;
    this.callTimeoutNanos = callTimeoutNanos;
    this.maxBatch = maxBatch;
  }

  /** The key's current value, or empty when it does not exist. */
  CompletableFuture<Optional<KeyValue>> read(ByteSequence key) {
    Pending pending = new Pending(key, new CompletableFuture<>());
    boolean send;
    synchronized (this) {
      queue.add(pending);
      send = !sending;
      sending = true;
    }
    if (send) {
      sendNext();
    }
    return pending.result;
  }

  private void sendNext() {
    Map<ByteSequence, List<Pending>> batch = new LinkedHashMap<>();
    synchronized (this) {
      while (!queue.isEmpty() && (batch.size() < maxBatch || batch.containsKey(queue.peek().key))) {
        Pending p = queue.poll();
        batch.computeIfAbsent(p.key, k -> new ArrayList<>()).add(p);
      }
      if (batch.isEmpty()) {
        sending = false;
        return;
      }
    }
    List<ByteSequence> keys = new ArrayList<>(batch.keySet());
    // One key (an idle store's case) is a plain range read, which etcd serves faster than a
    // transaction; several go in one read-only transaction. Both are reads only, so jetcd may send
    // them again to another member when one is unavailable.
    CompletableFuture<List<GetResponse>> sent;
    if (keys.size() == 1) {
      sent = EtcdErrors.safely(() -> kv.get(keys.get(0))).thenApply(List::of);
    } else {
      Op[] gets = keys.stream().map(k -> Op.get(k, GetOption.DEFAULT)).toArray(Op[]::new);
      sent =
          EtcdErrors.safely(() -> kv.txn(READ_ONLY).Then(gets).commit())
              .thenApply(TxnResponse::getGetResponses);
    }
    // The timeout also opens the gate for the next batch should a request never be answered.
    sent.orTimeout(callTimeoutNanos, TimeUnit.NANOSECONDS)
        .whenComplete(
            (responses, error) -> {
              for (int i = 0; i < keys.size(); i++) {
                List<Pending> waiting = batch.get(keys.get(i));
                if (error != null) {
                  waiting.forEach(p -> p.result.completeExceptionally(error));
                } else {
                  GetResponse get = responses.get(i);
                  Optional<KeyValue> value =
                      get.getKvs().isEmpty() ? Optional.empty() : Optional.of(get.getKvs().get(0));
                  waiting.forEach(p -> p.result.complete(value));
                }
              }
              sendNext();
            });
  }
}
