package dev.baton.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.baton.election.FencingToken;
import dev.baton.election.LeaseRecord;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.options.LeaseOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongFunction;

/**
 * What followers see of a holder: its candidate id and token from the key, its TTL from its etcd
 * lease. The TTL is reported as this store would report it for its own grant; the time left is
 * etcd's, in whole seconds, when it was asked for or came at no extra cost.
 */
final class HolderRecords {

  private static final int CACHE_SIZE = 1024;

  private final Lease leaseClient;
  private final EtcdLeases leases;
  private final Calls calls;
  private final LongFunction<Duration> reportedTtl;

  /** Granted TTLs of other stores' etcd leases; a lease's granted TTL never changes. */
  private final Map<Long, Long> grantedSecondsOfOthers =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
          return size() > CACHE_SIZE;
        }
      };

  HolderRecords(
      Lease leaseClient, EtcdLeases leases, Calls calls, LongFunction<Duration> reportedTtl) {
    this.leaseClient = leaseClient;
    this.leases = leases;
    this.calls = calls;
    this.reportedTtl = reportedTtl;
  }

  /**
   * The record of the holder of {@code kv}. Asks etcd for the holder's lease only when {@code
   * withExpiry} or when its TTL is not known yet.
   */
  LeaseRecord of(String election, KeyValue kv, long deadline, boolean withExpiry) {
    String holder = kv.getValue().toString(UTF_8);
    FencingToken token = FencingToken.of(kv.getModRevision());
    long leaseId = kv.getLease();
    if (leaseId == 0) {
      // Not written by a Baton store: it never expires on its own.
      return new LeaseRecord(
          election, holder, token, Duration.ZERO, Optional.empty(), Optional.empty());
    }
    Optional<EtcdLease> own = leases.byId(leaseId);
    Long known;
    synchronized (grantedSecondsOfOthers) {
      known =
          own.isPresent()
              ? Long.valueOf(own.get().grantedSeconds)
              : grantedSecondsOfOthers.get(leaseId);
    }
    if (known != null && !withExpiry) {
      return new LeaseRecord(
          election, holder, token, reportedTtl.apply(known), Optional.empty(), Optional.empty());
    }
    LeaseTimeToLiveResponse ttl =
        calls.await(
            Calls.retryingAuth(() -> leaseClient.timeToLive(leaseId, LeaseOption.DEFAULT)),
            deadline,
            election,
            "reading the holder's etcd lease");
    if (ttl.getGrantedTTL() > 0 && own.isEmpty()) {
      synchronized (grantedSecondsOfOthers) {
        grantedSecondsOfOthers.put(leaseId, ttl.getGrantedTTL());
      }
    }
    long granted = ttl.getGrantedTTL() > 0 ? ttl.getGrantedTTL() : (known == null ? 0 : known);
    // TTL -1: the lease expired after the key was read; the key is gone or about to be.
    Duration left = Duration.ofSeconds(Math.max(0, ttl.getTTL()));
    return new LeaseRecord(
        election,
        holder,
        token,
        granted > 0 ? reportedTtl.apply(granted) : Duration.ZERO,
        Optional.empty(),
        Optional.of(left));
  }
}
