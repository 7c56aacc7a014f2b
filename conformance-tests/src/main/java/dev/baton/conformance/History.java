package dev.baton.conformance;

import static java.util.Objects.requireNonNull;

import dev.baton.election.FencingToken;
import dev.baton.election.LeaseStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Everything that happened to the leases of a test class, on one monotonic clock: every store call
 * each node made (when it started and ended, and what came back) and every term an elector began
 * and ended. {@link #check} proves from it, per election, that:
 *
 * <ul>
 *   <li>every call returned or failed within the renew deadline (the store's call timeout must be
 *       shorter);
 *   <li>no two terms overlapped. A term starts when the store call that granted it returned, and
 *       ends at the earlier of its {@code onRevoked} and its local validity deadline, which is the
 *       start of its last successful acquire or renew plus the renew deadline (the elector measures
 *       from just before the call, so this bound is never early);
 *   <li>fencing tokens strictly increase in grant order: of two grants where one call returned
 *       before the other began, the later has the higher token;
 *   <li>the lease contract held: nobody was granted before {@code t0 + ttl} of another term's last
 *       successful acquire or renew that started at {@code t0}, unless that lease was released
 *       first; a term of the same candidate id is no exception, since a live lease is never granted
 *       again;
 *   <li>nobody was granted while another term still had work stopping, unless that term's lease had
 *       run out on its own by then: a leader gives its lease up only after its work stopped (its
 *       {@code onRevoked} returned, or its work said so with {@link #recordWorkStopped}), so the
 *       next leader's work never runs beside it;
 *   <li>every single answer kept the contract (renew keeps the token, a grant's TTL is never
 *       shorter than asked, nobody is told "held" by itself under a lease of its id that is gone).
 * </ul>
 *
 * <p>Times are {@link System#nanoTime()}; messages print them relative to the history's creation.
 */
public final class History {

  /** What kind of store call a {@link Call} was. */
  public enum Kind {
    ACQUIRE,
    RENEW,
    RELEASE
  }

  /** How a store call ended. */
  public enum Outcome {
    /** tryAcquire granted, renew succeeded, release returned. */
    OK,
    /** tryAcquire answered that somebody else holds it; renew answered that the lease is lost. */
    REFUSED,
    /** The store could not answer (an exception other than a lost lease). */
    FAILED
  }

  /**
   * One store call.
   *
   * @param token the granted or renewed token (for OK acquires and renews) or the token the call
   *     was about (renew and release); null for refused or failed acquires
   * @param ttl the effective TTL the store answered with; null when it did not grant
   */
  public record Call(
      String election,
      String node,
      String candidate,
      Kind kind,
      long startNanos,
      long endNanos,
      Outcome outcome,
      FencingToken token,
      Duration ttl) {

    boolean confirmedLease() {
      return outcome == Outcome.OK && (kind == Kind.ACQUIRE || kind == Kind.RENEW);
    }

    boolean isGrant() {
      return outcome == Outcome.OK && kind == Kind.ACQUIRE;
    }
  }

  /**
   * A term an elector began ({@code onElected}) and, once it ended, when {@code onRevoked} came.
   */
  public record TermRecord(
      String election,
      String candidate,
      FencingToken token,
      long electedNanos,
      Optional<Long> revokedNanos) {}

  private final long origin = System.nanoTime();
  private final Map<String, List<Call>> calls = new HashMap<>();
  private final List<TermRecord> terms = new ArrayList<>();
  private final Map<String, Long> workStops = new HashMap<>();
  private final List<String> breaches = new ArrayList<>();

  // ---------------------------------------------------------------- recording

  /**
   * Wraps {@code store} so that every acquire, renewal and release {@code node} makes through it is
   * timed and recorded here, and single answers are checked against the contract on the spot: for
   * tests outside the suite (a backend's own failure scenarios) that want the suite's {@link
   * #check}. The wrapper never closes {@code store}.
   */
  public LeaseStore recording(String node, LeaseStore store) {
    return new RecordingLeaseStore(
        requireNonNull(node, "node"), requireNonNull(store, "store"), this);
  }

  public synchronized void recordCall(Call call) {
    requireNonNull(call, "call");
    calls.computeIfAbsent(call.election, e -> new ArrayList<>()).add(call);
  }

  /** A single answer that broke the contract; {@link #check} reports it. */
  public synchronized void recordBreach(String election, String what) {
    breaches.add(election + ": " + what);
  }

  public synchronized void recordElected(String election, String candidate, FencingToken token) {
    terms.add(new TermRecord(election, candidate, token, System.nanoTime(), Optional.empty()));
  }

  public synchronized void recordRevoked(String election, String candidate, FencingToken token) {
    long now = System.nanoTime();
    for (int i = terms.size() - 1; i >= 0; i--) {
      TermRecord t = terms.get(i);
      if (t.election.equals(election)
          && t.candidate.equals(candidate)
          && t.token.equals(token)
          && t.revokedNanos.isEmpty()) {
        terms.set(i, new TermRecord(election, candidate, token, t.electedNanos, Optional.of(now)));
        return;
      }
    }
    breaches.add(
        election
            + ": "
            + candidate
            + " was revoked for token "
            + token
            + " without being elected for it");
  }

  /**
   * The leader work of {@code candidate}'s term {@code token} has stopped, now. For work that does
   * not stop within {@code onRevoked} (or runs before the listener that records the revocation);
   * the later of this and the revocation counts as the moment the term's work stopped.
   */
  public synchronized void recordWorkStopped(
      String election, String candidate, FencingToken token) {
    workStops.merge(
        workKey(election, candidate, token), System.nanoTime(), (a, b) -> b - a > 0 ? b : a);
  }

  /**
   * When the work of a term stopped: the later of its {@code onRevoked} and a recorded stop; empty
   * while either is missing.
   */
  public synchronized Optional<Long> workStoppedNanos(TermRecord term) {
    Long stop = workStops.get(workKey(term.election, term.candidate, term.token));
    if (term.revokedNanos.isEmpty()) {
      return Optional.empty();
    }
    long revoked = term.revokedNanos.get();
    return Optional.of(stop == null || revoked - stop >= 0 ? revoked : stop);
  }

  private static String workKey(String election, String candidate, FencingToken token) {
    return election + "\n" + candidate + "\n" + token;
  }

  // ---------------------------------------------------------------- queries

  public synchronized List<Call> calls(String election) {
    return List.copyOf(calls.getOrDefault(election, List.of()));
  }

  public synchronized List<Call> calls(String election, Predicate<Call> filter) {
    return calls.getOrDefault(election, List.of()).stream().filter(filter).toList();
  }

  /** Granted acquires of {@code election}, in the order their calls started. */
  public List<Call> grants(String election) {
    return calls(election, Call::isGrant).stream()
        .sorted(Comparator.comparingLong(Call::startNanos))
        .toList();
  }

  /** The last call that confirmed {@code candidate}'s lease (a grant or a renewal). */
  public Optional<Call> lastConfirmed(String election, String candidate) {
    return calls(election, c -> c.candidate.equals(candidate) && c.confirmedLease()).stream()
        .max(Comparator.comparingLong(Call::startNanos));
  }

  public synchronized List<TermRecord> terms(String election) {
    return terms.stream().filter(t -> t.election.equals(election)).toList();
  }

  /** Nanoseconds since the history began, for messages. */
  public String at(long nanos) {
    return String.format("+%.3fs", (nanos - origin) / 1e9);
  }

  // ---------------------------------------------------------------- checks

  /**
   * Checks everything recorded for {@code election}, whose electors used {@code renewDeadline}.
   *
   * @throws AssertionError listing every violation found
   */
  public void check(String election, Duration renewDeadline) {
    check(election, renewDeadline, renewDeadline);
  }

  /**
   * {@link #check(String, Duration)} for a store whose calls may last up to {@code longestCall} (a
   * driver that cannot bound a call to a frozen server): every other check is the same.
   */
  public void check(String election, Duration renewDeadline, Duration longestCall) {
    List<String> problems = new ArrayList<>();
    List<Call> mine = calls(election);
    synchronized (this) {
      breaches.stream().filter(b -> b.startsWith(election + ": ")).forEach(problems::add);
    }
    checkDurations(mine, longestCall, problems);
    checkTokens(mine, problems);
    checkExclusion(mine, problems);
    checkTerms(terms(election), mine, renewDeadline, problems);
    checkWorkStoppedBeforeOthersGranted(terms(election), mine, problems);
    if (!problems.isEmpty()) {
      throw new AssertionError(
          "election '"
              + election
              + "' broke the lease contract:\n  "
              + String.join("\n  ", problems));
    }
  }

  /**
   * A call must return or fail within the store's call timeout, which is shorter than the renew
   * deadline.
   */
  private void checkDurations(List<Call> mine, Duration renewDeadline, List<String> problems) {
    mine.stream()
        .filter(c -> c.endNanos - c.startNanos >= renewDeadline.toNanos())
        .forEach(
            c ->
                problems.add(
                    c.kind
                        + " by "
                        + c.candidate
                        + " on "
                        + c.node
                        + " took "
                        + (c.endNanos - c.startNanos) / 1_000_000
                        + " ms ("
                        + at(c.startNanos)
                        + ", "
                        + c.outcome
                        + "), not less than "
                        + renewDeadline.toMillis()
                        + " ms: the store's call timeout must be shorter than the renew deadline"));
  }

  private void checkTokens(List<Call> mine, List<String> problems) {
    List<Call> grants =
        mine.stream()
            .filter(Call::isGrant)
            .sorted(Comparator.comparingLong(Call::startNanos))
            .toList();
    for (int i = 0; i < grants.size(); i++) {
      Call a = grants.get(i);
      for (int j = i + 1; j < grants.size(); j++) {
        Call b = grants.get(j);
        if (a.token.equals(b.token)) {
          problems.add(
              "token "
                  + a.token
                  + " was granted twice: to "
                  + describe(a)
                  + " and to "
                  + describe(b));
        } else if (a.endNanos < b.startNanos && !b.token.isNewerThan(a.token)) {
          problems.add("tokens went backwards: " + describe(a) + " then " + describe(b));
        }
      }
    }
  }

  private void checkExclusion(List<Call> mine, List<String> problems) {
    List<Call> releases =
        mine.stream().filter(c -> c.kind == Kind.RELEASE && c.token != null).toList();
    List<Call> confirmed = mine.stream().filter(Call::confirmedLease).toList();
    for (Call grant : mine.stream().filter(Call::isGrant).toList()) {
      Call worst = null;
      long worstEnd = 0;
      for (Call held : confirmed) {
        if (!grant.token.isNewerThan(held.token)) {
          continue;
        }
        long end = windowEnd(held, releases);
        if (worst == null || end - worstEnd > 0) {
          worst = held;
          worstEnd = end;
        }
      }
      if (worst != null && grant.endNanos - worstEnd < 0) {
        problems.add(
            describe(grant)
                + " although "
                + worst.candidate
                + "'s lease (token "
                + worst.token
                + ", confirmed by a call started at "
                + at(worst.startNanos)
                + " with ttl "
                + worst.ttl.toMillis()
                + " ms) ran until "
                + at(worstEnd));
      }
    }
  }

  /**
   * Until when a confirmed lease excluded everybody else, its own holder's id included: its TTL
   * from the start of the call, or the start of a release of that term, whichever came first. A
   * release that failed counts too, since it may have reached the store.
   */
  private static long windowEnd(Call held, List<Call> releases) {
    long end = held.startNanos + held.ttl.toNanos();
    for (Call r : releases) {
      if (r.candidate.equals(held.candidate) && r.token.equals(held.token)) {
        long releasedAt = Math.max(r.startNanos, held.startNanos);
        if (releasedAt - end < 0) {
          end = releasedAt;
        }
      }
    }
    return end;
  }

  private void checkTerms(
      List<TermRecord> mine, List<Call> calls, Duration renewDeadline, List<String> problems) {
    record Interval(TermRecord term, long start, long end) {}
    List<Interval> intervals = new ArrayList<>();
    for (TermRecord t : mine) {
      Optional<Call> grant =
          calls.stream()
              .filter(
                  c -> c.isGrant() && c.token.equals(t.token) && c.candidate.equals(t.candidate))
              .findFirst();
      if (grant.isEmpty()) {
        problems.add(
            t.candidate
                + " was elected with token "
                + t.token
                + " at "
                + at(t.electedNanos)
                + ", which no acquire granted it");
        continue;
      }
      long lastConfirmedStart =
          calls.stream()
              .filter(
                  c ->
                      c.confirmedLease()
                          && c.token.equals(t.token)
                          && c.candidate.equals(t.candidate))
              .mapToLong(Call::startNanos)
              .max()
              .orElseThrow();
      long validUntil = lastConfirmedStart + renewDeadline.toNanos();
      long end = t.revokedNanos.map(r -> Math.min(r, validUntil)).orElse(validUntil);
      if (grant.get().endNanos - t.electedNanos > 0) {
        problems.add(
            t.candidate
                + " was elected with token "
                + t.token
                + " at "
                + at(t.electedNanos)
                + ", before the store granted it");
      }
      intervals.add(new Interval(t, grant.get().endNanos, end));
    }
    for (int i = 0; i < intervals.size(); i++) {
      for (int j = i + 1; j < intervals.size(); j++) {
        Interval a =
            intervals.get(i).start - intervals.get(j).start <= 0
                ? intervals.get(i)
                : intervals.get(j);
        Interval b = a == intervals.get(i) ? intervals.get(j) : intervals.get(i);
        // Terms of one candidate id get no leeway: a live lease is never granted again, so one id
        // used by two electors (two processes) must not overlap either.
        if (a.start - b.end < 0 && b.start - a.end < 0) {
          problems.add(
              "terms overlapped: "
                  + a.term.candidate
                  + " (token "
                  + a.term.token
                  + ", "
                  + at(a.start)
                  + " to "
                  + at(a.end)
                  + ") and "
                  + b.term.candidate
                  + " (token "
                  + b.term.token
                  + ", "
                  + at(b.start)
                  + " to "
                  + at(b.end)
                  + "); calls then:\n      "
                  + String.join(
                      "\n      ",
                      callsBetween(calls, Math.min(a.start, b.start), Math.max(a.end, b.end))));
        }
      }
    }
  }

  /**
   * A term's lease may end before its work has stopped only by running out: a release (or a late
   * renewal's release) that lets another candidate in while the old work still runs breaks the
   * promise that two terms' work never overlaps. A term whose work never stopped counts as still
   * stopping; a stalled leader's lease that ran out on its own excuses it.
   */
  private void checkWorkStoppedBeforeOthersGranted(
      List<TermRecord> mine, List<Call> calls, List<String> problems) {
    List<Call> grants = calls.stream().filter(Call::isGrant).toList();
    for (TermRecord t : mine) {
      long ranOut =
          calls.stream()
              .filter(
                  c ->
                      c.confirmedLease()
                          && c.token.equals(t.token)
                          && c.candidate.equals(t.candidate))
              .mapToLong(c -> c.startNanos + c.ttl.toNanos())
              .max()
              .orElse(t.electedNanos);
      Optional<Long> stopped = workStoppedNanos(t);
      for (Call g : grants) {
        if (!g.token.isNewerThan(t.token) || g.endNanos - ranOut >= 0) {
          continue;
        }
        if (stopped.isEmpty() || g.endNanos - stopped.get() < 0) {
          problems.add(
              describe(g)
                  + " while the work of "
                  + t.candidate
                  + "'s term (token "
                  + t.token
                  + ") was still stopping (stopped "
                  + stopped.map(this::at).orElse("never")
                  + ", its lease would have run out at "
                  + at(ranOut)
                  + "): a lease must be given up only after the work stopped; calls then:\n      "
                  + String.join(
                      "\n      ", callsBetween(calls, t.electedNanos, stopped.orElse(g.endNanos))));
        }
      }
    }
  }

  private List<String> callsBetween(List<Call> calls, long from, long to) {
    return calls.stream()
        .filter(
            c ->
                c.endNanos - from >= 0
                    && c.startNanos - to <= 0
                    && !(c.kind == Kind.ACQUIRE && c.outcome == Outcome.REFUSED))
        .sorted(Comparator.comparingLong(Call::startNanos))
        .limit(40)
        .map(
            c ->
                at(c.startNanos)
                    + ".."
                    + at(c.endNanos)
                    + " "
                    + c.node
                    + " "
                    + c.kind
                    + " "
                    + c.outcome
                    + (c.token == null ? "" : " token " + c.token))
        .toList();
  }

  private String describe(Call c) {
    return c.candidate
        + " on "
        + c.node
        + " was granted token "
        + c.token
        + " (call "
        + at(c.startNanos)
        + " to "
        + at(c.endNanos)
        + ")";
  }
}
