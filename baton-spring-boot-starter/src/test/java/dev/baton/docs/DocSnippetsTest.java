package dev.baton.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import dev.baton.election.MemoryLeaseStore;
import dev.baton.testservers.JavaSnippets;
import dev.baton.testservers.JavaSnippets.Context;
import dev.baton.testservers.MarkdownPage;
import dev.baton.testservers.MarkdownPage.Block;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java and properties block of the README and of docs/ works as shown: the Java compiles with
 * its own imports against the library (this module's tests have every backend, Spring and
 * Micrometer), and the properties load into a configuration the library accepts. The Spring
 * properties blocks are started in a Spring application by DocPropertiesTest; the README's service
 * is run in three JVMs by backend-jdbc's ReadmeExampleIT.
 */
class DocSnippetsTest {

  /** The README's section that holds Spring properties, left to DocPropertiesTest. */
  private static final String README_SPRING = "## Five minutes in Spring Boot";

  private static final Pattern BACKEND_KEY = Pattern.compile("^election\\.([a-z-]+)\\.");

  /**
   * What each page's blocks may use without declaring it, as their comments say it is the user's: a
   * client, the store built above, the term's lease, types of the user's own.
   */
  private static final Map<String, Context> CONTEXTS =
      Map.ofEntries(
          Map.entry(
              "README.md",
              new Context(
                  "",
                  "interface Outbox {\n"
                      + "  void sendBatch(dev.baton.election.FencingToken token,"
                      + " java.time.Duration wait) throws InterruptedException;\n}\n",
                  "")),
          Map.entry(
              "docs/configuration.md",
              new Context("  dev.baton.election.LeaseStore store;\n", "", "")),
          Map.entry(
              "docs/jdbc.md",
              new Context(
                  "  javax.sql.DataSource dataSource;\n"
                      + "  org.jooq.DSLContext dslContext;\n"
                      + "  dev.baton.election.Term term;\n"
                      + "  dev.baton.election.LeaseStore store;\n"
                      + "  String runId;\n",
                  "",
                  "")),
          Map.entry(
              "docs/zookeeper.md",
              new Context(
                  "  org.apache.curator.framework.CuratorFramework curator;\n"
                      + "  dev.baton.zookeeper.ZooKeeperLeaseStore store;\n"
                      + "  dev.baton.election.Lease lease;\n"
                      + "  byte[] bytes;\n",
                  "",
                  // Curator's operations and guarded() declare checked exceptions of their own.
                  "throws Exception")),
          Map.entry(
              "docs/etcd.md",
              new Context(
                  "  dev.baton.etcd.EtcdLeaseStore store;\n  dev.baton.election.Lease lease;\n",
                  "",
                  "")),
          Map.entry(
              "docs/kubernetes.md",
              new Context("  io.fabric8.kubernetes.client.KubernetesClient client;\n", "", "")),
          Map.entry(
              "docs/dynamodb.md",
              new Context(
                  "  software.amazon.awssdk.services.dynamodb.DynamoDbClient dynamoDbClient;\n",
                  "",
                  "")),
          Map.entry(
              "docs/azure-blob.md",
              new Context(
                  "  com.azure.storage.blob.BlobContainerClient containerClient;\n", "", "")),
          Map.entry(
              "docs/metrics.md",
              new Context(
                  "  io.micrometer.core.instrument.MeterRegistry registry;\n"
                      + "  dev.baton.election.LeaseStore store;\n",
                  "",
                  "")),
          Map.entry(
              "docs/spring-boot.md",
              new Context(
                  "",
                  "interface BillingService {\n"
                      + "  void run(dev.baton.election.FencingToken token);\n}\n"
                      + "interface Outbox {\n"
                      + "  void sendBatch(dev.baton.election.FencingToken token,"
                      + " java.time.Duration wait) throws InterruptedException;\n}\n",
                  "")),
          Map.entry(
              "docs/conformance.md",
              new Context(
                  "",
                  "final class AcmeClient implements AutoCloseable {\n"
                      + "  static AcmeClient connect(java.net.InetSocketAddress server,"
                      + " java.time.Duration timeout) {\n"
                      + "    return new AcmeClient();\n  }\n"
                      + "  @Override\n  public void close() {}\n}\n"
                      + "final class AcmeLeaseStore extends dev.baton.election.ForwardingLeaseStore {\n"
                      + "  AcmeLeaseStore(AcmeClient client) {\n"
                      + "    super(new dev.baton.election.MemoryLeaseStore());\n  }\n}\n",
                  "")));

  @Test
  @DisplayName(
      "every Java block of the README and of docs/ compiles as shown, with its own imports")
  void javaBlocksCompile(@TempDir Path dir) throws IOException {
    List<Block> blocks = new ArrayList<>();
    for (String page : MarkdownPage.all()) {
      blocks.addAll(MarkdownPage.read(page).blocks("java"));
    }
    // Every backend's page has one at least, and the README two.
    assertThat(blocks).hasSizeGreaterThanOrEqualTo(20);
    assertThat(blocks)
        .extracting(Block::page)
        .contains(
            "README.md",
            "docs/jdbc.md",
            "docs/zookeeper.md",
            "docs/etcd.md",
            "docs/kubernetes.md",
            "docs/dynamodb.md",
            "docs/azure-blob.md",
            "docs/consul.md",
            "docs/file.md",
            "docs/spring-boot.md",
            "docs/metrics.md",
            "docs/conformance.md");

    String errors =
        JavaSnippets.compile(blocks, page -> CONTEXTS.getOrDefault(page, Context.NONE), dir);

    assertThat(errors).as("compiler errors").isEmpty();
  }

  @Test
  @DisplayName(
      "every properties block outside Spring's loads as written and is accepted by the library")
  void propertiesBlocksLoad() throws IOException {
    List<Block> blocks = new ArrayList<>();
    for (String page : MarkdownPage.all()) {
      if (page.equals("docs/spring-boot.md")) {
        continue; // DocPropertiesTest starts Spring on those
      }
      MarkdownPage read = MarkdownPage.read(page);
      blocks.addAll(
          (page.equals("README.md") ? read.without(README_SPRING) : read).blocks("properties"));
    }
    assertThat(blocks)
        .extracting(Block::page)
        .contains("README.md", "docs/jdbc.md", "docs/elect.md");

    for (Block b : blocks) {
      String where = b.page() + " line " + b.line();
      Properties p = new Properties();
      p.load(new StringReader(b.text()));
      assertThat(p.stringPropertyNames()).as("keys of the block at " + where).isNotEmpty();
      for (String key : p.stringPropertyNames()) {
        // A .properties file has no inline comments: "jdbc   # optional" would be the value.
        assertThat(p.getProperty(key)).as(key + " at " + where).doesNotContain("#");
      }
      String backend = backendOf(p, where);
      // Here every backend jar is on the classpath; the block is written for the one its keys name.
      p.putIfAbsent("election.backend", backend);
      ElectionProperties properties = ElectionProperties.of(p);

      Elector.builder(new MemoryLeaseStore()).configure(properties); // refuses unknown keys
      try (LeaseStore store = properties.openStore()) {
        assertThat(store.describe()).as("the store of the block at " + where).startsWith(backend);
      }
    }
  }

  /** The one backend whose keys a block sets. */
  private static String backendOf(Properties p, String where) {
    Set<String> backends = new TreeSet<>();
    for (String key : p.stringPropertyNames()) {
      Matcher m = BACKEND_KEY.matcher(key);
      if (m.find()) {
        backends.add(m.group(1));
      }
    }
    if (p.getProperty("election.backend") != null) {
      backends.add(p.getProperty("election.backend"));
    }
    assertThat(backends).as("the backends the block at " + where + " configures").hasSize(1);
    return backends.iterator().next();
  }
}
