package dev.baton.zookeeper;

import dev.baton.election.MonotonicClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * never given back once granted.
 */
final class Places {

  private static final Logger log = LoggerFactory.getLogger(Places.class);

  private final MonotonicClock clock;
  private final Consumer<Place> giveBack;

  /** Election, then candidate. */
  private final Map<String, Map<String, Place>> places = new HashMap<>();

  /** Raw paths of nodes created by calls still under way: see {@link #joining}. */
  private final Set<String> joining = new HashSet<>();

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

    private boolean givenBack;

    /** When the line changed and the candidate has not tried since; 0 when it has. */
    private long unansweredSinceNanos;

    private boolean checkPending;

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
    joining.remove(place.rawPath());
    return true;
  }

  /**
   * Marks {@code place} granted, unless it was given back meanwhile: false then, and the candidate
   * must not lead on it. A grant {@code onRead} is refused too once the place was granted (a
   * concurrent call of the same candidate got there first): its token would be handed out twice, so
   * the caller writes instead. A place just taken is recorded here too.
   */
  synchronized boolean grant(Place place, boolean onRead) {
    if (place.givenBack || (onRead && place.granted)) {
      return false;
    }
    Map<String, Place> ofElection =
        places.computeIfAbsent(place.nodes.election(), e -> new HashMap<>());
    Place current = ofElection.get(place.candidate);
    if (closed || (current != null && current != place)) {
      // The store closed, or another call of the same candidate took a place meanwhile: this one
      // leaves the line.
      place.givenBack = true;
      joining.remove(place.rawPath());
      giveBack.accept(place);
      return false;
    }
    ofElection.put(place.candidate, place);
    joining.remove(place.rawPath());
    place.granted = true;
    place.leased = true;
    return true;
  }

  /**
   * A grant that writes could not tell whether its write applied, or was refused. A new term leaves
   * the term before it as it was: its lease may be in use until it runs out or is released. A first
   * grant leaves nobody leading on the place: it may be given back if nobody claims it (a write
   * that did apply is given back when its answer comes), at once when the candidate does not
   * follow, and its next grant writes again, so that no token is handed out twice.
   */
  synchronized void grantUnknown(Place place, boolean newTerm) {
    if (newTerm || place.givenBack) {
      return;
    }
    place.leased = false;
    if (followerCount(place.nodes.election(), place.candidate) == 0) {
      place.givenBack = true;
      forget(place);
      giveBack.accept(place);
    }
  }

  /**
   * A node a call of this store has just created and not yet kept, granted or left: not a node left
   * behind, whatever another call of the same candidate reads meanwhile.
   */
  synchronized void joining(String rawPath) {
    joining.add(rawPath);
  }

  /** The node was kept, granted or left. */
  synchronized void joined(String rawPath) {
    joining.remove(rawPath);
  }

  /** The place's node is gone, or leaves the line: it is nothing of this store's any more. */
  synchronized void forget(Place place) {
    Map<String, Place> ofElection = places.get(place.nodes.election());
    if (ofElection != null && ofElection.remove(place.candidate, place) && ofElection.isEmpty()) {
      places.remove(place.nodes.election());
    }
  }

  /**
   * Whether {@code rawPath}, a node of the candidate, is one this store knows: its place, or a node
   * a call is just taking. One it does not know was left behind (a create whose answer was lost).
   */
  synchronized boolean knows(String election, String candidate, String rawPath) {
    Place place = get(election, candidate);
    return joining.contains(rawPath) || (place != null && place.rawPath().equals(rawPath));
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
    joining.clear();
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
