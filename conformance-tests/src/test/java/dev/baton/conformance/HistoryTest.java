package dev.baton.conformance;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.conformance.History.Call;
import dev.baton.conformance.History.Kind;
import dev.baton.conformance.History.Outcome;
import dev.baton.election.FencingToken;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The checker must catch what it is there to catch, and pass what is fine. */
class HistoryTest {

  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration DEADLINE = Duration.ofSeconds(2);
  private static final long S = 1_000_000_000L;

  private final History history = new History();
  private final long t = System.nanoTime();

  private void grant(String candidate, long token, long start, long end) {
    history.recordCall(
        new Call(
            "e",
            candidate,
            candidate,
            Kind.ACQUIRE,
            start,
            end,
            Outcome.OK,
            FencingToken.of(token),
            TTL));
  }

  private void release(String candidate, long token, long start) {
    history.recordCall(
        new Call(
            "e",
            candidate,
            candidate,
            Kind.RELEASE,
            start,
            start + 1000,
            Outcome.OK,
            FencingToken.of(token),
            null));
  }

  @Test
  void passesHandOversByReleaseAndByExpiry() {
    grant("a", 1, t, t + 1000);
    release("a", 1, t + S);
    grant("b", 2, t + S + 2000, t + S + 3000);
    grant("a", 3, t + S + 3 * S + 5000, t + 5 * S);
    assertThatCode(() -> history.check("e", DEADLINE)).doesNotThrowAnyException();
  }

  @Test
  void catchesAGrantBeforeAnotherCandidatesLeaseRanOut() {
    grant("a", 1, t, t + 1000);
    grant("b", 2, t + 2 * S, t + 2 * S + 1000);
    assertThatThrownBy(() -> history.check("e", DEADLINE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("b on b was granted token 2");
  }

  @Test
  void catchesTokensThatGoBackwards() {
    grant("a", 5, t, t + 1000);
    release("a", 5, t + 2000);
    grant("b", 4, t + 3000, t + 4000);
    assertThatThrownBy(() -> history.check("e", DEADLINE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("tokens went backwards");
  }

  @Test
  void catchesOverlappingTerms() {
    long now = System.nanoTime();
    grant("a", 1, now - 1000, now - 500);
    history.recordElected("e", "a", FencingToken.of(1));
    release("a", 1, now);
    grant("b", 2, System.nanoTime(), System.nanoTime());
    // b's onElected comes while a's term is neither revoked nor past its deadline.
    history.recordElected("e", "b", FencingToken.of(2));
    assertThatThrownBy(() -> history.check("e", DEADLINE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("terms overlapped");
  }

  @Test
  void passesTermsThatEndBeforeTheNextBegins() {
    long now = System.nanoTime();
    grant("a", 1, now - 1000, now - 500);
    history.recordElected("e", "a", FencingToken.of(1));
    history.recordRevoked("e", "a", FencingToken.of(1));
    release("a", 1, System.nanoTime());
    grant("b", 2, System.nanoTime(), System.nanoTime());
    history.recordElected("e", "b", FencingToken.of(2));
    assertThatCode(() -> history.check("e", DEADLINE)).doesNotThrowAnyException();
  }

  @Test
  void catchesACallThatOutlastedTheRenewDeadline() {
    history.recordCall(
        new Call(
            "e", "a", "a", Kind.RENEW, t, t + 2 * S, Outcome.FAILED, FencingToken.of(1), null));
    assertThatThrownBy(() -> history.check("e", DEADLINE)).hasMessageContaining("took 2000 ms");
  }

  @Test
  void reportsBreachesOfSingleAnswers() {
    history.recordBreach("e", "renew changed the token");
    assertThatThrownBy(() -> history.check("e", DEADLINE))
        .hasMessageContaining("renew changed the token");
  }

  @Test
  void catchesAGrantToAnotherWhileTheOldTermsWorkWasStillStopping() {
    long now = System.nanoTime();
    grant("a", 1, now - 1000, now - 500);
    history.recordElected("e", "a", FencingToken.of(1));
    // The term ends (its validity judged by the deadline), the lease is released at once, b comes
    // in...
    release("a", 1, now + 1000);
    grant("b", 2, now + 3000, now + 4000);
    // ...and only then has a's work stopped.
    history.recordWorkStopped("e", "a", FencingToken.of(1));
    history.recordRevoked("e", "a", FencingToken.of(1));
    assertThatThrownBy(() -> history.check("e", DEADLINE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("b on b was granted token 2")
        .hasMessageContaining("was still stopping");
  }

  @Test
  void passesAGrantAfterAStalledLeadersLeaseRanOutOnItsOwn() {
    long now = System.nanoTime();
    grant("a", 1, now - 5 * S, now - 5 * S + 1000);
    // a stalls: b is granted after a's lease ran out, a's work stops only when a wakes up.
    grant("b", 2, now - S, now - S + 1000);
    history.recordElected("e", "a", FencingToken.of(1));
    history.recordWorkStopped("e", "a", FencingToken.of(1));
    history.recordRevoked("e", "a", FencingToken.of(1));
    assertThatCode(() -> history.check("e", DEADLINE)).doesNotThrowAnyException();
  }

  @Test
  void catchesAGrantToTheHolderWhileItsLeaseIsLive() {
    long now = System.nanoTime();
    grant("a", 1, now - 1000, now - 500);
    history.recordElected("e", "a", FencingToken.of(1));
    // A live lease is never granted again, not even to its holder's id...
    grant("a", 2, System.nanoTime(), System.nanoTime());
    history.recordRevoked("e", "a", FencingToken.of(1));
    // ...however the two terms were told.
    history.recordElected("e", "a", FencingToken.of(2));
    assertThatThrownBy(() -> history.check("e", DEADLINE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("a on a was granted token 2")
        .hasMessageContaining("although a's lease");
  }

  @Test
  void passesAGrantToTheHolderAfterItReleasedItsLease() {
    long now = System.nanoTime();
    grant("a", 1, now - 2000, now - 1500);
    history.recordElected("e", "a", FencingToken.of(1));
    history.recordRevoked("e", "a", FencingToken.of(1));
    release("a", 1, now - 1000);
    grant("a", 2, System.nanoTime(), System.nanoTime());
    history.recordElected("e", "a", FencingToken.of(2));
    assertThatCode(() -> history.check("e", DEADLINE)).doesNotThrowAnyException();
  }

  @Test
  void catchesTwoTermsOfOneCandidateIdToldAtOnce() {
    long now = System.nanoTime();
    grant("a", 1, now - 1000, now - 500);
    history.recordElected("e", "a", FencingToken.of(1));
    grant("a", 2, System.nanoTime(), System.nanoTime());
    // Two electors sharing the id: the second is told while the first still leads.
    history.recordElected("e", "a", FencingToken.of(2));
    history.recordRevoked("e", "a", FencingToken.of(1));
    assertThatThrownBy(() -> history.check("e", DEADLINE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("terms overlapped");
  }
}
