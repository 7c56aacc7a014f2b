package dev.baton.azureblob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.azure.core.exception.HttpResponseException;
import dev.baton.conformance.CapturedLog;
import dev.baton.conformance.FaultProxy;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Failed calls with a SAS URL and with an account key (issue 36, section 2): no secret reaches a
 * log line, the SDK's included, nor the message or cause chain of any exception the store hands
 * out, which the elector logs in full.
 */
class AzureBlobSecretsIT {

  /** A signature that Azurite refuses; its value must appear nowhere. */
  private static final String SIGNATURE = "c2VjcmV0LXNpZ25hdHVyZS0xMjM0NTY3ODkw";

  private static final String SAS =
      "sv=2021-08-06&ss=b&srt=co&sp=rwc&se=2030-01-01T00:00:00Z&spr=http&sig=" + SIGNATURE + "%3D";

  /** A well-formed account key that is not Azurite's: refused, and never shown. */
  private static final String KEY =
      "c2VjcmV0LWFjY291bnQta2V5LXRoYXQtbXVzdC1uZXZlci1iZS1sb2dnZWQtYW55d2hlcmUtMDEyMzQ1Njc4OQ==";

  private static final List<String> SECRETS = List.of(SIGNATURE, KEY, KEY.substring(0, 24));

  private static Azurite azurite;

  @BeforeAll
  static void start() {
    azurite = Azurite.start();
  }

  @AfterAll
  static void stop() {
    if (azurite != null) {
      azurite.close();
    }
  }

  private static LeaseStore withSas(InetSocketAddress at) {
    return open(
        p -> {
          p.setProperty(AzureBlobLeaseStoreProvider.ENDPOINT, Azurite.endpoint(at));
          p.setProperty(AzureBlobLeaseStoreProvider.SAS_TOKEN, SAS);
        });
  }

  private static LeaseStore withKey(InetSocketAddress at) {
    return open(
        p ->
            p.setProperty(
                AzureBlobLeaseStoreProvider.CONNECTION_STRING,
                Azurite.connectionString(at).replace(Azurite.KEY, KEY)));
  }

  private static LeaseStore open(Consumer<Properties> credentials) {
    Properties p = new Properties();
    p.setProperty(ElectionProperties.BACKEND, "azure-blob");
    p.setProperty(AzureBlobLeaseStoreProvider.CONTAINER, "baton-secrets");
    p.setProperty(AzureBlobLeaseStoreProvider.CALL_TIMEOUT, "1s");
    credentials.accept(p);
    return ElectionProperties.of(p).openStore();
  }

  @Test
  void aSasRefusedByTheServerIsNeverShown() {
    checkNoSecretIsShown(withSas(azurite.address()), "HTTP 403");
  }

  @Test
  void anAccountKeyRefusedByTheServerIsNeverShown() {
    checkNoSecretIsShown(withKey(azurite.address()), "HTTP 403");
  }

  @Test
  void aSasOnAConnectionThatFailsIsNeverShown() {
    try (FaultProxy proxy = FaultProxy.start(azurite.address())) {
      proxy.cut();
      checkNoSecretIsShown(withSas(proxy.address()), "failed within the call timeout");
    }
  }

  @Test
  void aSasOnACallThatTimesOutIsNeverShown() {
    try (FaultProxy proxy = FaultProxy.start(azurite.address())) {
      proxy.blackhole();
      checkNoSecretIsShown(withSas(proxy.address()), "");
    }
  }

  @Test
  void anAccountKeyOnAConnectionThatFailsIsNeverShown() {
    try (FaultProxy proxy = FaultProxy.start(azurite.address())) {
      proxy.cut();
      checkNoSecretIsShown(withKey(proxy.address()), "failed within the call timeout");
    }
  }

  /**
   * Every call of the store fails, directly and under an elector that logs what it is handed; the
   * exceptions' whole chains (messages, causes, suppressed) and every line logged meanwhile are
   * searched for the secrets.
   */
  private static void checkNoSecretIsShown(LeaseStore store, String expected) {
    String election = "secrets-" + UUID.randomUUID();
    Lease lease = new Lease(election, "a", FencingToken.of(1), Duration.ofSeconds(15), "0 x 1");
    List<Throwable> thrown = new ArrayList<>();
    try (store;
        CapturedLog log = CapturedLog.start()) {
      thrown.add(catchThrowable(() -> store.tryAcquire(election, "a", Duration.ofSeconds(15))));
      thrown.add(catchThrowable(() -> store.read(election)));
      thrown.add(catchThrowable(() -> store.renew(lease)));
      thrown.add(catchThrowable(() -> store.release(lease)));
      try (Elector elector =
          Elector.builder(store)
              .election(election)
              .candidate("a")
              .leaseDuration(Duration.ofSeconds(15))
              .renewDeadline(Duration.ofSeconds(10))
              .retryPeriod(Duration.ofMillis(200))
              .build()) {
        elector.start();
        Awaitility.await("until the elector logged a failed attempt")
            .atMost(Duration.ofSeconds(20))
            .until(() -> log.text().contains(election) && !log.linesAtWarnOrAbove().isEmpty());
      }
      assertThat(thrown.get(0)).as("tryAcquire failed").isNotNull();
      assertThat(thrown.get(0).getMessage()).contains(expected);
      StringWriter chains = new StringWriter();
      for (Throwable t : thrown) {
        if (t != null) {
          t.printStackTrace(new PrintWriter(chains));
        }
      }
      for (Throwable t : thrown) {
        for (Throwable c = t; c != null; c = c.getCause()) {
          // What a logger that serializes an exception's fields (a JSON layout, an error tracker)
          // would show: the SDK's exceptions carry the request, SAS and all.
          if (c instanceof HttpResponseException h && h.getResponse() != null) {
            assertThat(h.getResponse().getRequest().getUrl().toString())
                .as("the request URL that %s carries", c.getClass().getName())
                .doesNotContain(SIGNATURE);
          }
        }
      }
      for (String secret : SECRETS) {
        assertThat(chains.toString()).as("the exceptions handed out").doesNotContain(secret);
        assertThat(log.text()).as("the log").doesNotContain(secret);
      }
      assertThat(log.text()).as("the log").doesNotContainPattern("(?i)sig=[^<&\\s]");
      assertThat(chains.toString()).doesNotContainPattern("(?i)sig=[^<&\\s]");
    }
  }
}
