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

  private static LeaseRecord record(String holder, long token, Optional<Instant> renewedAt, Optional<Duration> expiresIn) {
    return new LeaseRecord("billing", holder, FencingToken.of(token), Duration.ofSeconds(15), renewedAt, expiresIn);
  }

  @Test
  void how_long_ago_comes_from_the_store_alone_ttl_minus_what_it_says_is_left() {
    LeaseRecord r = record("a", 7, Optional.of(Instant.parse("2026-11-22T10:00:00Z")), Optional.of(Duration.ofMillis(13_800)));

    assertThat(StatusCommand.renewed(r)).isEqualTo("1.2s ago (at 2026-11-22T10:00:00Z by the store's clock)");
  }

  @Test
  void without_expiry_it_shows_the_store_timestamp_or_says_it_does_not_know() {
    assertThat(StatusCommand.renewed(record("a", 7, Optional.of(Instant.parse("2026-11-22T10:00:00Z")), Optional.empty())))
        .isEqualTo("at 2026-11-22T10:00:00Z by the store's clock");
    assertThat(StatusCommand.renewed(record("a", 7, Optional.empty(), Optional.empty()))).isEqualTo("unknown (the store does not say)");
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
  void changes_say_what_was_before() {
    Optional<LeaseRecord> a = Optional.of(record("a", 7, Optional.empty(), Optional.empty()));
    Optional<LeaseRecord> b = Optional.of(record("b", 8, Optional.empty(), Optional.empty()));

    assertThat(StatusCommand.change(a, b)).isEqualTo("leader b, token 8 (was a, token 7)");
    assertThat(StatusCommand.change(b, Optional.empty())).isEqualTo("no leader: the lease was released or expired (was b, token 8)");
    assertThat(StatusCommand.change(Optional.empty(), a)).isEqualTo("leader a, token 7 (nobody led)");
  }
}
