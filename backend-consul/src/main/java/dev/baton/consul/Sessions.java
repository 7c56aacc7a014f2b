package dev.baton.consul;

import dev.baton.election.LeaseStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.kiwiproject.consul.ConsulException;
import org.kiwiproject.consul.SessionClient;
import org.kiwiproject.consul.model.session.ImmutableSession;
import org.kiwiproject.consul.model.session.SessionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's Consul sessions: one per distinct TTL (in practice one per process), shared by every
 * election the store holds with that TTL, as the ZooKeeper store shares its session. Each is
 * created with
 *
 * <ul>
 *   <li>{@code Behavior=release}: when Consul invalidates it, the keys it locked are unlocked, not
 *       deleted, so the key stays and its {@code LockIndex} keeps counting;
 *   <li>{@code LockDelay=0s}: Consul's default of 15 s would keep a key unlockable for 15 s after
 *       an invalidation (a crash, a cut), on top of up to twice the TTL. Baton needs no delay: a
 *       leader stops acting at its renew deadline, before the TTL from its last renewal runs out,
 *       and Consul invalidates no earlier than that TTL;
 *   <li>no health checks ({@code Checks=[]}): a session bound to the node's {@code serfHealth}
 *       check would be invalidated when the agent that created it fails, even while the store
 *       renews it through another server. Only its TTL ends it.
 * </ul>
 */
final class Sessions {

  private static final Logger log = LoggerFactory.getLogger(Sessions.class);

  /** A session this store created: its id and TTL. */
  record Live(String id, Duration ttl) {}

  private final SessionClient client;
  private final Calls calls;
  private final String name;
  private final Map<Duration, Live> byTtl = new ConcurrentHashMap<>();

  Sessions(SessionClient client, Calls calls, String name) {
    this.client = client;
    this.calls = calls;
    this.name = name;
  }

  /**
   * A session with {@code ttl} that this call renewed or created, so it lives at least {@code ttl}
   * from now: a grant on it then lasts {@code ttl} from the start of the acquisition that asked.
   */
  synchronized Live fresh(Duration ttl, String election, long deadline) {
    Live known = byTtl.get(ttl);
    if (known != null) {
      if (renew(known.id(), election, deadline)) {
        return known;
      }
      byTtl.remove(ttl, known);
    }
    Live created = create(ttl, election, deadline);
    byTtl.put(ttl, created);
    return created;
  }

  /** Renews the session; false when Consul no longer knows it (invalidated, destroyed). */
  boolean renew(String id, String election, long deadline) {
    Optional<SessionInfo> info =
        calls.await(
            () -> {
              try {
                return client.renewSession(id);
              } catch (ConsulException e) {
                if (e.hasCode() && e.getCode() == 404) {
                  return Optional.<SessionInfo>empty();
                }
                throw e;
              }
            },
            deadline,
            election,
            "renewing the Consul session");
    return info.isPresent();
  }

  private Live create(Duration ttl, String election, long deadline) {
    ImmutableSession session =
        ImmutableSession.builder()
            .name(name)
            .ttl(ttl.toMillis() + "ms")
            .behavior("release")
            .lockDelay("0s")
            .checks(List.of())
            .build();
    try {
      String id =
          calls.await(
              () -> client.createSession(session).getId(),
              deadline,
              election,
              "creating a Consul session with TTL " + ttl.toMillis() + "ms");
      log.debug("Created Consul session {} (TTL {} ms)", id, ttl.toMillis());
      return new Live(id, ttl);
    } catch (LeaseStoreException e) {
      if (String.valueOf(e.getMessage()).contains("Session TTL")) {
        throw new LeaseStoreException(
            election,
            "Consul refused a session TTL of "
                + ttl.toMillis()
                + "ms; its servers accept TTLs from their session_ttl_min (10s unless configured)"
                + " to 86400s: raise election.lease-duration or lower session_ttl_min",
            e);
      }
      throw e;
    }
  }

  /** Forgets a session Consul no longer knows, so the next acquisition creates a new one. */
  void forget(String id) {
    byTtl.values().removeIf(l -> l.id().equals(id));
  }

  /** Destroys every session (which unlocks their keys at once: no lock delay), best effort. */
  void destroyAll(long deadline) {
    List<Live> all = new ArrayList<>(byTtl.values());
    byTtl.clear();
    for (Live live : all) {
      try {
        calls.await(
            () -> {
              client.destroySession(live.id());
              return null;
            },
            deadline,
            "(all)",
            "destroying Consul session " + live.id());
      } catch (LeaseStoreException e) {
        log.debug(
            "Consul session {} was not destroyed on close; it ends within twice its TTL: {}",
            live.id(),
            e.getMessage());
      }
    }
  }
}
