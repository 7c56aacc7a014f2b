package dev.baton.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** IDEs complete and check the keys from the metadata the build generates. */
class ConfigurationMetadataTest {

  @Test
  @DisplayName("every election key is described, with its default where there is one")
  void metadata() throws Exception {
    JsonNode root;
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("generated metadata on the classpath").isNotNull();
      root = JsonMapper.builder().build().readTree(in);
    }
    Map<String, JsonNode> byName = new HashMap<>();
    root.path("properties").forEach(p -> byName.put(p.path("name").asString(), p));
    assertThat(byName)
        .containsKeys(
            "election.enabled",
            "election.backend",
            "election.name",
            "election.candidate-id",
            "election.lease-duration",
            "election.renew-deadline",
            "election.retry-period",
            "election.jdbc.url",
            "election.jdbc.table",
            "election.zookeeper.connect-string",
            "election.etcd.endpoints",
            "election.etcd.max-txn-ops",
            "election.kubernetes.namespace",
            "election.metrics.client-go-status");
    assertThat(byName.get("election.lease-duration").path("defaultValue").asString())
        .isEqualTo("15s");
    assertThat(byName.get("election.lease-duration").path("type").asString())
        .isEqualTo("java.time.Duration");
    assertThat(byName.get("election.jdbc.table").path("defaultValue").asString())
        .isEqualTo("baton_lease");
    assertThat(byName.get("election.jdbc.url").path("description").asString())
        .contains("DataSource");
    byName
        .values()
        .forEach(
            p ->
                assertThat(p.path("description").asString())
                    .as(p.path("name").asString())
                    .isNotBlank());
  }
}
