package dev.baton.azureblob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpRequest;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobProperties;
import com.azure.storage.blob.models.LeaseStateType;
import com.azure.storage.common.StorageSharedKeyCredential;
import dev.baton.conformance.FaultProxy;
import dev.baton.conformance.StopAfterUnansweredGrant;
import dev.baton.election.Lease;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStoreException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * A request Azure applies after its caller gave up (issue 36, section 3): the proxy of candidate a
 * forwards the request and holds the answer past the call timeout, then heals. Whatever was
 * applied, a's term stays or ends cleanly, nobody waits out a lease that no elector was told of,
 * and a graceful release afterwards hands over in milliseconds.
 */
class AzureBlobUnknownOutcomeIT {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration TTL = Duration.ofSeconds(15);
  private static final String CONTAINER = "baton-unknown";
  private static final HttpHeaderName LEASE_ACTION = HttpHeaderName.fromString("x-ms-lease-action");

  private static Azurite azurite;
  private static BlobContainerClient observer;

  private FaultProxy proxy;
  private final AtomicReference<Predicate<HttpRequest>> holdAnswerTo = new AtomicReference<>();
  private AzureBlobLeaseStore a;
  private AzureBlobLeaseStore b;

  @BeforeAll
  static void start() {
    azurite = Azurite.start();
    observer = Azurite.container(azurite.address(), CONTAINER, CALL_TIMEOUT);
    observer.createIfNotExists();
  }

  @AfterAll
  static void stop() {
    if (azurite != null) {
      azurite.close();
    }
  }

  @BeforeEach
  void stores() {
    proxy = FaultProxy.start(azurite.address());
    a =
        AzureBlobLeaseStore.builder(
                AzureBlobLeaseStoreProvider.clientBuilder(CALL_TIMEOUT)
                    .endpoint(Azurite.endpoint(proxy.address()))
                    .containerName(CONTAINER)
                    .credential(new StorageSharedKeyCredential(Azurite.ACCOUNT, Azurite.KEY))
                    .addPolicy(new HoldAnswer())
                    .buildClient())
            .callTimeout(CALL_TIMEOUT)
            .build();
    b = AzureBlobLeaseStore.builder(observer).callTimeout(CALL_TIMEOUT).build();
  }

  @AfterEach
  void closeProxy() {
    proxy.close();
  }

  /**
   * An election whose blob has had a term, given back. A new blob's first term waits for the next
   * second of Azure's clock (so that tokens keep rising across a deleted blob), which the 1 s call
   * timeout of these tests does not always leave; what they test begins after that first term.
   */
  private static String newElection() {
    String election = "unknown-" + UUID.randomUUID();
    AzureBlobLeaseStore first =
        AzureBlobLeaseStore.builder(observer).callTimeout(Duration.ofSeconds(5)).build();
    try {
      first.release(first.tryAcquire(election, "first", TTL).lease().orElseThrow());
    } finally {
      first.close();
    }
    return election;
  }

  private static BlobProperties blob(String election) {
    return observer.getBlobClient(election).getProperties();
  }

  @Test
  void aRenewalAppliedAfterItsCallerGaveUpKeepsTheTermAndAReleaseHandsOverAtOnce() {
    String election = newElection();
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();

    holdAnswerTo.set(r -> "renew".equals(r.getHeaders().getValue(LEASE_ACTION)));
    assertThatThrownBy(() -> a.renew(lease)).isInstanceOf(LeaseStoreException.class);
    proxy.heal();

    Lease renewed = a.renew(lease);
    assertThat(renewed.token()).as("the same term").isEqualTo(lease.token());
    assertThat(b.read(election).map(LeaseRecord::holder)).contains("a");
    handsOverAtOnce(renewed, "a renewal applied late");
  }

  @Test
  void anAcquireAppliedAfterItsCallerGaveUpIsReleasedByItsNextAttempt() {
    String election = newElection();
    a.release(a.tryAcquire(election, "a", TTL).lease().orElseThrow()); // the blob exists

    holdAnswerTo.set(r -> "acquire".equals(r.getHeaders().getValue(LEASE_ACTION)));
    assertThatThrownBy(() -> a.tryAcquire(election, "a", TTL))
        .isInstanceOf(LeaseStoreException.class);
    Awaitility.await("until Azurite applied the acquire whose answer a never read")
        .atMost(Duration.ofSeconds(10))
        .until(() -> blob(election).getLeaseState() == LeaseStateType.LEASED);
    proxy.heal();
    assertThat(b.tryAcquire(election, "b", TTL).isGranted())
        .as("b, while a's unanswered lease stands")
        .isFalse();

    long t0 = System.nanoTime();
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    System.out.println(
        "Azure Blob: the attempt after an acquire applied late was granted in "
            + (System.nanoTime() - t0) / 1_000_000
            + " ms");
    handsOverAtOnce(lease, "an acquire applied late");
  }

  @Test
  void aTermWrittenAfterItsCallerGaveUpIsReleasedByItsNextAttempt() {
    String election = newElection();
    Lease before = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    a.release(before);

    holdAnswerTo.set(
        r -> r.getUrl().getQuery() != null && r.getUrl().getQuery().contains("comp=metadata"));
    assertThatThrownBy(() -> a.tryAcquire(election, "a", TTL))
        .isInstanceOf(LeaseStoreException.class);
    Awaitility.await("until Azurite applied the metadata write whose answer a never read")
        .atMost(Duration.ofSeconds(10))
        .until(() -> blob(election).getMetadata().containsKey("holder"));
    proxy.heal();
    LeaseRecord unknown = b.tryAcquire(election, "b", TTL).holder().orElseThrow();
    assertThat(unknown.holder()).isEqualTo("a");

    long t0 = System.nanoTime();
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    System.out.println(
        "Azure Blob: the attempt after a term written late was granted in "
            + (System.nanoTime() - t0) / 1_000_000
            + " ms");
    assertThat(lease.token().isNewerThan(unknown.token()))
        .as("a newer term than the one nobody was told of")
        .isTrue();
    handsOverAtOnce(lease, "a term written late");
  }

  @Test
  void aReleaseWhoseAnswerWasLostIsCompletedByTheNextAttempt() {
    String election = newElection();
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();

    // The release's first request, which clears the holder, is applied; the second is never sent.
    holdAnswerTo.set(
        r -> r.getUrl().getQuery() != null && r.getUrl().getQuery().contains("comp=metadata"));
    assertThatThrownBy(() -> a.release(lease)).isInstanceOf(LeaseStoreException.class);
    Awaitility.await("until Azurite applied the write whose answer a never read")
        .atMost(Duration.ofSeconds(10))
        .until(() -> !blob(election).getMetadata().containsKey("holder"));
    proxy.heal();
    assertThat(blob(election).getLeaseState()).isEqualTo(LeaseStateType.LEASED);

    long t0 = System.nanoTime();
    Lease again = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    System.out.println(
        "Azure Blob: the attempt after a release left half done was granted in "
            + (System.nanoTime() - t0) / 1_000_000
            + " ms");
    assertThat(again.token().isNewerThan(lease.token())).isTrue();
    handsOverAtOnce(again, "a release left half done");
  }

  @Test
  void anElectorClosedAfterAnAcquireWithNoAnswerHandsOverAtOnce() {
    String election = newElection();
    Duration lease = Duration.ofSeconds(30);
    StopAfterUnansweredGrant.Handover handover =
        StopAfterUnansweredGrant.run(
            a,
            () -> holdAnswerTo.set(r -> "acquire".equals(r.getHeaders().getValue(LEASE_ACTION))),
            proxy,
            b,
            election,
            lease,
            () -> blob(election).getLeaseState() == LeaseStateType.LEASED);
    System.out.println(
        "Azure Blob: elector closed after an acquire with no answer, another store granted: "
            + handover.closeToGrant().toMillis()
            + " ms (lease 30 s)");
    b.release(handover.next());
  }

  /** a releases; b is granted by its first attempt, a newer term, within a few round trips. */
  private void handsOverAtOnce(Lease lease, String after) {
    long t0 = System.nanoTime();
    a.release(lease);
    Lease taken = b.tryAcquire(lease.election(), "b", TTL).lease().orElseThrow();
    long millis = (System.nanoTime() - t0) / 1_000_000;
    System.out.println(
        "Azure Blob: release and takeover after " + after + " took " + millis + " ms");
    assertThat(taken.token().isNewerThan(lease.token())).isTrue();
    assertThat(millis).as("release and takeover, ms").isLessThan(CALL_TIMEOUT.toMillis() * 2);
    b.release(taken);
  }

  /** Stops reading the answers of the proxy once a request it was told of is about to go out. */
  private final class HoldAnswer implements HttpPipelinePolicy {
    private void holdIfAsked(HttpPipelineCallContext context) {
      Predicate<HttpRequest> p = holdAnswerTo.get();
      if (p != null && p.test(context.getHttpRequest()) && holdAnswerTo.compareAndSet(p, null)) {
        proxy.stopReadingAnswers();
      }
    }

    @Override
    public Mono<HttpResponse> process(
        HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
      holdIfAsked(context);
      return next.process();
    }

    @Override
    public HttpResponse processSync(
        HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
      holdIfAsked(context);
      return next.processSync();
    }
  }
}
