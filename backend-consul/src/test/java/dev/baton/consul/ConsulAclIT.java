package dev.baton.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.net.HostAndPort;
import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStoreException;
import dev.baton.testservers.ConsulServers;
import dev.baton.testservers.MarkdownPage;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.Consul;

/**
 * The store on a dev agent that enforces ACLs ({@code default_policy = "deny"}), with a token that
 * has only the policy docs/consul.md gives, read from the page itself.
 */
class ConsulAclIT {

  private static final Duration TTL = Duration.ofSeconds(2);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);
  private static final String MANAGEMENT = UUID.randomUUID().toString();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  private static ConsulServers consul;
  private static int port;

  @BeforeAll
  static void start() {
    consul =
        ConsulServers.dev(
            "acl { enabled = true\n default_policy = \"deny\"\n tokens { master = \""
                + MANAGEMENT
                + "\" } }");
    port = consul.agent(0).httpAddress().getPort();
  }

  @AfterAll
  static void stop() {
    if (consul != null) {
      consul.close();
    }
  }

  @Test
  void theDocumentedLeastPrivilegePolicyIsEnoughForEveryCall() throws Exception {
    String rules =
        MarkdownPage.read("docs/consul.md").section("## ACLs").blocks("hcl").get(0).text();
    String token = tokenWith("baton-" + UUID.randomUUID(), rules);
    Consul client = client(token);
    try (ConsulLeaseStore a = store(client);
        ConsulLeaseStore b = store(client)) {
      Lease lease = a.tryAcquire("acl", "a", TTL).lease().orElseThrow();
      Acquisition held = b.tryAcquire("acl", "b", TTL);
      assertThat(held.holder().orElseThrow().holder()).isEqualTo("a");
      assertThat(a.renew(lease).token()).isEqualTo(lease.token());
      assertThat(b.read("acl").orElseThrow().holder()).isEqualTo("a");
      AtomicInteger changes = new AtomicInteger();
      try (var watch = b.watch("acl", changes::incrementAndGet).orElseThrow()) {
        Awaitility.await("the watch's first answer").until(() -> changes.get() >= 1);
        int before = changes.get();
        a.release(lease);
        Awaitility.await("the release reported").until(() -> changes.get() > before);
      }
      assertThat(b.tryAcquire("acl", "b", TTL).isGranted()).isTrue();
    } finally {
      client.destroy();
    }
  }

  @Test
  void withoutSessionWriteTheStoreFailsWithConsulsRefusal() throws Exception {
    String token =
        tokenWith(
            "keys-only-" + UUID.randomUUID(),
            "key_prefix \"baton/elections/\" {\n  policy = \"write\"\n}\n");
    Consul client = client(token);
    try (ConsulLeaseStore store = store(client)) {
      assertThatThrownBy(() -> store.tryAcquire("acl-no-session", "a", TTL))
          .isInstanceOf(LeaseStoreException.class)
          .hasMessageContaining("403")
          .hasMessageNotContaining(token);
    } finally {
      client.destroy();
    }
  }

  private static ConsulLeaseStore store(Consul client) {
    return ConsulLeaseStore.builder(client).callTimeout(CALL_TIMEOUT).build();
  }

  private static Consul client(String token) {
    return ConsulLeaseStoreProvider.client(
        List.of(HostAndPort.fromParts("127.0.0.1", port)), token, CALL_TIMEOUT);
  }

  /** A policy with {@code rules} and a token with only that policy; the token's secret. */
  private static String tokenWith(String name, String rules)
      throws IOException, InterruptedException {
    put("/v1/acl/policy", Map.of("Name", name, "Rules", rules));
    Map<?, ?> token =
        JSON.readValue(
            put("/v1/acl/token", Map.of("Policies", List.of(Map.of("Name", name)))), Map.class);
    return (String) token.get("SecretID");
  }

  private static String put(String path, Object body) throws IOException, InterruptedException {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("X-Consul-Token", MANAGEMENT)
                .PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as("PUT %s: %s", path, response.body()).isEqualTo(200);
    return response.body();
  }
}
