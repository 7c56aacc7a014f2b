package dev.baton.zookeeper;

import dev.baton.election.MonotonicClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The nodes this store's candidates have in line, one per election and candidate, and which of them
 * were granted.
 *
 * <p>A place is kept while its candidate follows the election ({@link ZooKeeperLeaseStore#follow})
 * or holds a lease on it. A candidate that only tries once leaves the line again when refused, and
 * one that stops following gives its place back, so that the line holds only candidates that will
 * take the lease when it comes to them.
 *
 * <p>A follower first in line holds the lease for everyone else, granted or not, so one that does
 * not take it keeps the others out. A follower is told of every change to the line, and its elector
 * tries at once; a place whose candidate has not tried for a TTL since such a change is given back,
 * as a lease unrenewed for its TTL is ({@link UnrenewedLeases}): its elector is stuck, or cut off
 * from the store. Granting and giving back exclude each other here, under one lock, so a place is
 * never given back while a lease on it may be in use.
 */
final class Places {

  private static final Logger log = LoggerFactory.getLogger(Places.class);

  private final MonotonicClock clock;
  private final Consumer<Place> giveBack;

  /** Election, then candidate. */
  private final Map<String, Map<String, Place>> places = new HashMap<>();

  /** Open {@link ZooKeeperLeaseStore#follow} subscriptions by election, then candidate. */
  private final Map<String, Map<String, Integer>> followers = new HashMap<>();

  private boolean closed;

  /** One candidate's node in line. */
  static final class Place {
    final ElectionNodes nodes;
    final String candidate;
    final String node;
    final long sessionId;
    final Duration ttl;

    /** A grant was handed out, or written, on this node: every later grant writes. */
    private boolean granted;

    /** A lease on this node may be in use: it is not given back. */
    private boolean leased;

    /**
     * The node's data version as the last grant or read of this store left it: what a grant that
     * writes expects to find.
     */
    private int version;

    private boolean givenBack;

    /** When the line changed and the candidate has not tried since; 0 when it has. */
    private long unansweredSinceNanos;

    private boolean checkPending;

    /** At least third in line at the last read of it: see {@link #farBehind}. */
    private boolean farBehind;

    Place(ElectionNodes nodes, String candidate, String node, long sessionId, Duration ttl) {
      this.nodes = nodes;
      this.candidate = candidate;
      this.node = node;
      this.sessionId = sessionId;
      this.ttl = ttl;
    }

    String rawPath() {
      return nodes.rawChild(node);
    }
  }

  Places(MonotonicClock clock, Consumer<Place> giveBack) {
    this.clock = clock;
    this.giveBack = giveBack;
  }

  /** The candidate's place, if it has one, now that it tries: the change it answers is answered. */
  synchronized Place attemptStarts(String election, String candidate) {
    Place place = get(election, candidate);
    if (place != null) {
      place.unansweredSinceNanos = 0;
    }
    return place;
  }

  /** Whether a {@link ZooKeeperLeaseStore#follow} subscription of the candidate is open. */
  synchronized boolean isFollowed(String election, String candidate) {
    return followerCount(election, candidate) > 0;
  }

  /** Notes where in {@code line}, just read, the place is. */
  synchronized void lineRead(Place place, Line line) {
    place.farBehind = line.farBehind(place.node);
  }

  /**
   * Whether the candidate's place was at least third in line when last read: a change to the line
   * then rarely makes it first, and its try can wait for the next in line's.
   */
  synchronized boolean farBehind(String election, String candidate) {
    Place place = get(election, candidate);
    return place != null && place.farBehind;
  }

  /** Whether the place has been granted: the candidate's next grant is a new term. */
  synchronized boolean isGranted(Place place) {
    return place.granted;
  }

  /**
   * Keeps a place the candidate just took in line and was refused in, if it follows the election;
   * false when it does not, and the caller leaves the line again.
   */
  synchronized boolean keep(Place place) {
    if (closed
        || followerCount(place.nodes.election(), place.candidate) == 0
        || get(place.nodes.election(), place.candidate) != null) {
      return false; // not following, or another call took a place for the candidate meanwhile
    }
    places
        .computeIfAbsent(place.nodes.election(), e -> new HashMap<>())
        .put(place.candidate, place);
    return true;
  }

  /** What {@link #grant} decided. */
  enum Grant {
    /** Given back meanwhile, or the store closed: the candidate must not lead on it. */
    REFUSED,
    /** The place's first grant: nobody leads on it yet. */
    FIRST,
    /** A new term: a lease of an earlier term on this node may still be in use. */
    AGAIN
  }

  /**
   * Marks {@code place} granted, unless it was given back meanwhile. A grant {@code onRead} is
   * refused too once the place was granted: its token would be handed out again, so the caller
   * writes instead. A place just taken is recorded here too.
   */
  synchronized Grant grant(Place place, boolean onRead) {
    if (place.givenBack || (onRead && place.granted)) {
      return Grant.REFUSED;
    }
    Map<String, Place> ofElection =
        places.computeIfAbsent(place.nodes.election(), e -> new HashMap<>());
    Place current = ofElection.get(place.candidate);
    if (closed || (current != null && current != place)) {
      // The store closed, or another call of the same candidate took a place meanwhile: this one
      // leaves the line.
      place.givenBack = true;
      giveBack.accept(place);
      return Grant.REFUSED;
    }
    ofElection.put(place.candidate, place);
    Grant grant = place.leased ? Grant.AGAIN : Grant.FIRST;
    place.granted = true;
    place.leased = true;
    return grant;
  }

  /**
   * A grant that wrote could not tell whether its write applied, or was refused. After a new term
   * ({@code grant} was {@link Grant#AGAIN}) the place stays as it was: the earlier term's lease may
   * be in use until it is released or runs out, and the store gives back what nobody renews ({@link
   * UnrenewedLeases}). After a first grant nobody leads on the place: it may be given back if
   * nobody claims it, at once when the candidate does not follow. Either way its next grant writes
   * again, so that no token is handed out twice.
   */
  synchronized void grantUnknown(Place place, Grant grant) {
    if (grant == Grant.AGAIN || place.givenBack) {
      return;
    }
    place.leased = false;
    if (followerCount(place.nodes.election(), place.candidate) == 0) {
      place.givenBack = true;
      forget(place);
      giveBack.accept(place);
    }
  }

  /** The node's version as a grant or read of this store saw it last. */
  synchronized int version(Place place) {
    return place.version;
  }

  synchronized void version(Place place, int version) {
    place.version = version;
  }

  /** The place's node is gone, or leaves the line: it is nothing of this store's any more. */
  synchronized void forget(Place place) {
    Map<String, Place> ofElection = places.get(place.nodes.election());
    if (ofElection != null && ofElection.remove(place.candidate, place) && ofElection.isEmpty()) {
      places.remove(place.nodes.election());
    }
  }

  /**
   * Whether {@code node} is the candidate's place, as far as this store knows. Each candidate makes
   * one call at a time (an elector does; two electors of one candidate id in one election are a
   * mistake the documentation warns of), so a node of the candidate in this session that is not its
   * place was left behind by an earlier call.
   */
  synchronized boolean isPlace(String election, String candidate, String node) {
    Place place = get(election, candidate);
    return place != null && place.node.equals(node);
  }

  /** The granted place whose node the lease handle names, if this store still has it. */
  synchronized Place granted(String election, String candidate, LeaseHandle handle) {
    Place place = get(election, candidate);
    return place != null && place.granted && place.node.equals(handle.node()) ? place : null;
  }

  /** A {@link ZooKeeperLeaseStore#follow} subscription opens. */
  synchronized void followed(String election, String candidate) {
    followers.computeIfAbsent(election, e -> new HashMap<>()).merge(candidate, 1, Integer::sum);
  }

  /**
   * A {@link ZooKeeperLeaseStore#follow} subscription closes: the last one gives the candidate's
   * place back unless it was granted (then it is a lease, and ends as one).
   */
  synchronized void unfollowed(String election, String candidate) {
    Map<String, Integer> ofElection = followers.get(election);
    if (ofElection == null || ofElection.merge(candidate, -1, Integer::sum) > 0) {
      return;
    }
    ofElection.remove(candidate);
    if (ofElection.isEmpty()) {
      followers.remove(election);
    }
    Place place = get(election, candidate);
    if (place != null && !place.leased) {
      place.givenBack = true;
      forget(place);
      giveBack.accept(place);
    }
  }

  /**
   * The line of {@code election} changed, or the watch on it was blind for a while: every place of
   * the election not granted yet is owed a try by its candidate.
   */
  synchronized void lineChanged(String election) {
    Map<String, Place> ofElection = places.get(election);
    if (closed || ofElection == null) {
      return;
    }
    long now = clock.nanoTime();
    for (Place place : ofElection.values()) {
      if (!place.leased && place.unansweredSinceNanos == 0) {
        place.unansweredSinceNanos = now == 0 ? 1 : now;
        checkLater(place);
      }
    }
  }

  /** Gives every place not granted back: the store closes, and nobody will take them. */
  synchronized List<Place> close() {
    closed = true;
    List<Place> waiting = new ArrayList<>();
    for (Map<String, Place> ofElection : places.values()) {
      for (Place place : ofElection.values()) {
        if (!place.leased) {
          place.givenBack = true;
          waiting.add(place);
        }
      }
    }
    places.clear();
    followers.clear();
    return waiting;
  }

  private Place get(String election, String candidate) {
    Map<String, Place> ofElection = places.get(election);
    return ofElection == null ? null : ofElection.get(candidate);
  }

  private int followerCount(String election, String candidate) {
    Map<String, Integer> ofElection = followers.get(election);
    return ofElection == null ? 0 : ofElection.getOrDefault(candidate, 0);
  }

  private void checkLater(Place place) {
    if (place.checkPending) {
      return;
    }
    place.checkPending = true;
    long due = place.unansweredSinceNanos + place.ttl.toNanos();
    long delay = Math.max(0, due - clock.nanoTime());
    CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS, UnrenewedLeases.ON_TIMER_THREAD)
        .execute(() -> check(place));
  }

  private synchronized void check(Place place) {
    place.checkPending = false;
    if (closed || place.leased || place.givenBack || place.unansweredSinceNanos == 0) {
      return;
    }
    if (clock.nanoTime() - (place.unansweredSinceNanos + place.ttl.toNanos()) < 0) {
      checkLater(place);
      return;
    }
    log.warn(
        "election '{}', candidate '{}': no try for the lease within its TTL ({}) after the line"
            + " changed, although its ZooKeeper session is alive (is the elector stuck?); gave its"
            + " place in line back so that it cannot keep the others out",
        place.nodes.election(),
        place.candidate,
        place.ttl);
    place.givenBack = true;
    forget(place);
    giveBack.accept(place);
  }
}
