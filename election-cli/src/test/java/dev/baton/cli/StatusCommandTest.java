package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.FencingToken;
import dev.baton.election.LeaseRecord;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StatusCommandTest {

  private static LeaseRecord record(
      String holder, long token, Optional<Instant> renewedAt, Optional<Duration> expiresIn) {
    return new LeaseRecord(
        "billing", holder, FencingToken.of(token), Duration.ofSeconds(15), renewedAt, expiresIn);
  }

  @Test
  void how_long_ago_comes_from_the_store_alone_ttl_minus_what_it_says_is_left() {
    LeaseRecord r =
        record(
            "a",
            7,
            Optional.of(Instant.parse("2026-11-22T10:00:00Z")),
            Optional.of(Duration.ofMillis(13_800)));

    assertThat(StatusCommand.renewed(r))
        .isEqualTo("1.2s ago (at 2026-11-22T10:00:00Z by the store's clock)");
  }

  @Test
  void without_expiry_it_shows_the_store_timestamp_or_says_it_does_not_know() {
    assertThat(
            StatusCommand.renewed(
                record(
                    "a", 7, Optional.of(Instant.parse("2026-11-22T10:00:00Z")), Optional.empty())))
        .isEqualTo("at 2026-11-22T10:00:00Z by the store's clock");
    assertThat(StatusCommand.renewed(record("a", 7, Optional.empty(), Optional.empty())))
        .isEqualTo("unknown (the store does not say)");
  }

  @Test
  void prints_holder_token_renewal_expiry_and_backend() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    StatusCommand.print(
        new PrintStream(bytes, true, StandardCharsets.UTF_8),
        "billing",
        Optional.of(record("host-a-12", 7, Optional.empty(), Optional.of(Duration.ofSeconds(14)))),
        "jdbc (PostgreSQL)");

    assertThat(bytes.toString(StandardCharsets.UTF_8))
        .isEqualTo(
            String.join(
                System.lineSeparator(),
                "election  billing",
                "leader    host-a-12",
                "token     7",
                "renewed   1s ago",
                "expires   in 14s unless renewed (lease 15s)",
                "backend   jdbc (PostgreSQL)",
                ""));
  }

  @Test
  void changes_say_what_was_before_and_how_it_ended() {
    Optional<LeaseRecord> a = Optional.of(record("a", 7, Optional.empty(), Optional.empty()));
    Optional<LeaseRecord> b = Optional.of(record("b", 8, Optional.empty(), Optional.empty()));

    assertThat(StatusCommand.change(a, b, StatusCommand.Ending.UNKNOWN))
        .isEqualTo("leader b, token 8 (was a, token 7)");
    assertThat(StatusCommand.change(a, b, StatusCommand.Ending.RELEASED))
        .isEqualTo("leader b, token 8 (was a, token 7; released)");
    assertThat(StatusCommand.change(b, Optional.empty(), StatusCommand.Ending.RELEASED))
        .isEqualTo("no leader: the lease was released (was b, token 8)");
    assertThat(StatusCommand.change(b, Optional.empty(), StatusCommand.Ending.EXPIRED))
        .isEqualTo(
            "no leader: the lease expired, not renewed within its lease of 15s (was b, token 8)");
    assertThat(StatusCommand.change(b, Optional.empty(), StatusCommand.Ending.UNKNOWN))
        .isEqualTo("no leader: the lease was released or expired (was b, token 8)");
    assertThat(StatusCommand.change(Optional.empty(), a, StatusCommand.Ending.UNKNOWN))
        .isEqualTo("leader a, token 7 (nobody led)");
  }

  @Test
  void a_lease_gone_well_before_it_was_due_was_released_and_one_seen_gone_after_expired() {
    Optional<LeaseRecord> held =
        Optional.of(record("a", 7, Optional.empty(), Optional.of(Duration.ofSeconds(10))));
    long readAt = 1_000_000_000L;

    assertThat(StatusCommand.ending(held, readAt, readAt + Duration.ofSeconds(2).toNanos()))
        .isEqualTo(StatusCommand.Ending.RELEASED);
    Optional<LeaseRecord> ending =
        Optional.of(record("a", 7, Optional.empty(), Optional.of(Duration.ofMillis(300))));
    assertThat(StatusCommand.ending(ending, readAt, readAt + Duration.ofSeconds(1).toNanos()))
        .isEqualTo(StatusCommand.Ending.EXPIRED);
    assertThat(StatusCommand.ending(held, readAt, readAt + Duration.ofSeconds(10).toNanos()))
        .as("gone after it was due, but the reads in between failed: it could have been released")
        .isEqualTo(StatusCommand.Ending.UNKNOWN);
    assertThat(
            StatusCommand.ending(
                Optional.of(record("a", 7, Optional.empty(), Optional.empty())), readAt, readAt))
        .isEqualTo(StatusCommand.Ending.UNKNOWN);
  }
}
