package dev.baton.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.azureblob.AzureBlobLeaseStore;
import dev.baton.dynamodb.DynamoDbLeaseStore;
import dev.baton.election.ElectionProperties;
import dev.baton.etcd.EtcdLeaseStore;
import dev.baton.file.FileLeaseStoreProvider;
import dev.baton.jdbc.JdbcLeaseStore;
import dev.baton.zookeeper.ZooKeeperLeaseStore;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** IDEs complete and check the keys from the metadata the build generates. */
class ConfigurationMetadataTest {

  static Map<String, JsonNode> metadataByName() throws IOException {
    JsonNode root;
    try (InputStream in =
        ConfigurationMetadataTest.class.getResourceAsStream(
            "/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("generated metadata on the classpath").isNotNull();
      root = JsonMapper.builder().build().readTree(in);
    }
    Map<String, JsonNode> byName = new HashMap<>();
    root.path("properties").forEach(p -> byName.put(p.path("name").asString(), p));
    return byName;
  }

  @Test
  @DisplayName(
      "the metadata lists exactly the keys of the core and of every backend, and Spring's own")
  void metadataMatchesTheDeclaredKeys() throws IOException {
    // Every backend jar is on this module's test classpath.
    Set<String> declared = new TreeSet<>(ElectionProperties.knownKeys());
    declared.addAll(EnvironmentElectionProperties.SPRING_KEYS);
    assertThat(declared).contains("election.dynamodb.table", "election.file.directory");
    Set<String> described = new TreeSet<>(metadataByName().keySet());
    // The step-down endpoint's management.endpoint.election.* keys are Spring's, not Baton's.
    described.removeIf(name -> !name.startsWith(ElectionProperties.PREFIX));
    assertThat(described).isEqualTo(declared);
  }

  @Test
  @DisplayName("every election key is described, with its default where there is one")
  void metadata() throws Exception {
    Map<String, JsonNode> byName = metadataByName();
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
    Map<String, String> defaults =
        Map.of(
            "election.jdbc.table", JdbcLeaseStore.DEFAULT_TABLE,
            "election.zookeeper.base-path", ZooKeeperLeaseStore.DEFAULT_BASE_PATH,
            "election.etcd.prefix", EtcdLeaseStore.DEFAULT_PREFIX,
            "election.dynamodb.table", DynamoDbLeaseStore.DEFAULT_TABLE,
            "election.azure-blob.container", AzureBlobLeaseStore.DEFAULT_CONTAINER,
            "election.file.directory", FileLeaseStoreProvider.DEFAULT_DIRECTORY);
    defaults.forEach(
        (key, value) ->
            assertThat(byName.get(key).path("defaultValue").asString()).as(key).isEqualTo(value));
    byName.keySet().stream()
        .filter(k -> k.matches(".*-(timeout|duration|deadline|period)"))
        .forEach(
            k ->
                assertThat(byName.get(k).path("type").asString())
                    .as(k)
                    .isEqualTo("java.time.Duration"));
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
