package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.baton.election.FencingToken;
import dev.baton.election.LeaseRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The JSON of {@code elect status --output json}, read back by a real JSON parser. */
class StatusJsonTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode parse(String text) throws Exception {
    return JSON.readTree(text);
  }

  @Test
  void a_leader_with_every_field_the_store_gives() throws Exception {
    LeaseRecord r =
        new LeaseRecord(
            "billing",
            "host-b-4121",
            FencingToken.of(17),
            Duration.ofSeconds(15),
            Optional.of(Instant.parse("2026-11-22T13:20:01.123Z")),
            Optional.of(Duration.ofMillis(13_800)));

    String text =
        StatusJson.of("billing", Optional.of("jdbc"), "jdbc (PostgreSQL)", Optional.of(r));
    JsonNode json = parse(text);

    assertThat(text).doesNotContain("\n");
    assertThat(json.fieldNames())
        .toIterable()
        .containsExactly(
            "schema",
            "election",
            "backend",
            "store",
            "leader",
            "fencing_token",
            "lease_duration_ms",
            "expires_in_ms",
            "renewed_ago_ms",
            "renewed_at");
    assertThat(json.get("schema").asInt()).isEqualTo(1);
    assertThat(json.get("election").asText()).isEqualTo("billing");
    assertThat(json.get("backend").asText()).isEqualTo("jdbc");
    assertThat(json.get("store").asText()).isEqualTo("jdbc (PostgreSQL)");
    assertThat(json.get("leader").asText()).isEqualTo("host-b-4121");
    assertThat(json.get("fencing_token").isIntegralNumber()).isTrue();
    assertThat(json.get("fencing_token").asLong()).isEqualTo(17);
    assertThat(json.get("lease_duration_ms").asLong()).isEqualTo(15_000);
    assertThat(json.get("expires_in_ms").asLong()).isEqualTo(13_800);
    assertThat(json.get("renewed_ago_ms").asLong()).isEqualTo(1_200);
    assertThat(json.get("renewed_at").asText()).isEqualTo("2026-11-22T13:20:01.123Z");
  }

  @Test
  void nobody_leads_every_lease_field_is_null_not_missing() throws Exception {
    JsonNode json = parse(StatusJson.of("x", Optional.of("file"), "lease files", Optional.empty()));

    for (String field :
        List.of(
            "leader",
            "fencing_token",
            "lease_duration_ms",
            "expires_in_ms",
            "renewed_ago_ms",
            "renewed_at")) {
      assertThat(json.has(field)).as(field).isTrue();
      assertThat(json.get(field).isNull()).as(field).isTrue();
    }
  }

  @Test
  void what_a_store_does_not_tell_is_null() throws Exception {
    LeaseRecord r =
        new LeaseRecord(
            "x",
            "a",
            FencingToken.of(1),
            Duration.ofSeconds(3),
            Optional.empty(),
            Optional.empty());

    JsonNode json = parse(StatusJson.of("x", Optional.empty(), "s", Optional.of(r)));

    assertThat(json.get("backend").isNull()).isTrue();
    assertThat(json.get("expires_in_ms").isNull()).isTrue();
    assertThat(json.get("renewed_ago_ms").isNull()).isTrue();
    assertThat(json.get("renewed_at").isNull()).isTrue();
    assertThat(json.get("lease_duration_ms").asLong()).isEqualTo(3_000);
  }

  @Test
  void names_with_quotes_backslashes_and_control_characters_come_back_unchanged() throws Exception {
    String nasty = "a\"b\\c\nd\re\tf\u0000g\u001fh\u007fi\u2028j é 😀 </script>";

    JsonNode json = parse(StatusJson.of(nasty, Optional.of("file"), nasty, Optional.empty()));

    assertThat(json.get("election").asText()).isEqualTo(nasty);
    assertThat(json.get("store").asText()).isEqualTo(nasty);
    assertThat(StatusJson.quote("\u0001")).isEqualTo("\"\\u0001\"");
  }
}
