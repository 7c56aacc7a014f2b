package dev.baton.azureblob;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.LeaseStateType;
import com.azure.storage.blob.specialized.BlobLeaseClient;
import com.azure.storage.blob.specialized.BlobLeaseClientBuilder;
import com.azure.storage.common.StorageSharedKeyCredential;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStoreException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * What others than Baton do to an election's blob (an operator breaks or deletes it, another client
 * leases it), and a grant that fails between its lease and its metadata write (issue 36, section
 * 2). Followers run on a clock of the test's, so that waiting out a lease takes no real time.
 */
class AzureBlobLeaseStoreFaultsIT {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration TTL = Duration.ofSeconds(15);
  private static final String CONTAINER = "baton-faults";

  private static Azurite azurite;
  private static BlobContainerClient container;

  @BeforeAll
  static void start() {
    azurite = Azurite.start();
    container = Azurite.container(azurite.address(), CONTAINER, CALL_TIMEOUT);
    container.createIfNotExists();
  }

  @AfterAll
  static void stop() {
    if (azurite != null) {
      azurite.close();
    }
  }

  private static String newElection() {
    return "faults-" + UUID.randomUUID();
  }

  private static AzureBlobLeaseStore store(AtomicLong now) {
    return AzureBlobLeaseStore.builder(container).callTimeout(CALL_TIMEOUT).clock(now::get).build();
  }

  private static AzureBlobLeaseStore store() {
    return AzureBlobLeaseStore.builder(container).callTimeout(CALL_TIMEOUT).build();
  }

  /** A client of the blob's leases that is not Baton's: an operator's, or another program's. */
  private static BlobLeaseClient operator(String election, String leaseId) {
    BlobLeaseClientBuilder b = new BlobLeaseClientBuilder().blobClient(blob(election));
    return leaseId == null ? b.buildClient() : b.leaseId(leaseId).buildClient();
  }

  private static BlobClient blob(String election) {
    return container.getBlobClient(election);
  }

  @Test
  void aLeaseBrokenByAnOperatorIsWaitedOutForAFullLeaseFromWhenItWasSeenBroken() {
    String election = newElection();
    AzureBlobLeaseStore a = store();
    AtomicLong now = new AtomicLong();
    AzureBlobLeaseStore b = store(now);
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();

    operator(election, null).breakLeaseWithResponse(0, null, null, null);
    assertThat(blob(election).getProperties().getLeaseState()).isEqualTo(LeaseStateType.BROKEN);

    // a may act on its term until its next renewal fails: b waits out a whole lease first.
    LeaseRecord shown = b.tryAcquire(election, "b", TTL).holder().orElseThrow();
    assertThat(shown.holder()).isEqualTo("a");
    assertThat(shown.token()).isEqualTo(lease.token());
    now.addAndGet(TTL.toNanos() - 1);
    assertThat(b.tryAcquire(election, "b", TTL).holder()).as("a nanosecond before").isPresent();
    assertThat(b.read(election).map(LeaseRecord::holder)).contains("a");
    now.addAndGet(1);
    Lease taken = b.tryAcquire(election, "b", TTL).lease().orElseThrow();
    assertThat(taken.token().isNewerThan(lease.token())).isTrue();

    assertThatThrownBy(() -> a.renew(lease)).isInstanceOf(LeaseLostException.class);
    b.release(taken);
  }

  @Test
  void aLeaseBreakingForLongerThanTheLeaseIsHeldUntilItIsBroken() {
    String election = newElection();
    AzureBlobLeaseStore a = store();
    AtomicLong now = new AtomicLong();
    AzureBlobLeaseStore b = store(now);
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();

    operator(election, null).breakLeaseWithResponse(60, null, null, null);
    assertThat(blob(election).getProperties().getLeaseState()).isEqualTo(LeaseStateType.BREAKING);
    assertThat(b.tryAcquire(election, "b", TTL).holder().map(LeaseRecord::holder)).contains("a");
    now.addAndGet(TTL.toNanos());

    // Waited out, but Azure still refuses an acquire until the break period ends: an answer.
    assertThat(b.tryAcquire(election, "b", TTL).holder().map(LeaseRecord::holder)).contains("a");
    assertThatThrownBy(() -> a.renew(lease)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void aBlobDeletedWhileHeldIsWaitedOutAndItsTokensDoNotStartAgain() {
    String election = newElection();
    AzureBlobLeaseStore a = store();
    AtomicLong now = new AtomicLong();
    AzureBlobLeaseStore b = store(now);
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    assertThat(b.read(election).map(LeaseRecord::holder)).contains("a");

    operator(election, null).breakLeaseWithResponse(0, null, null, null);
    blob(election).delete();

    assertThat(b.tryAcquire(election, "b", TTL).holder().map(LeaseRecord::holder))
        .as("the holder of the deleted blob, until its lease has run out")
        .contains("a");
    now.addAndGet(TTL.toNanos());
    Lease taken = b.tryAcquire(election, "b", TTL).lease().orElseThrow();
    assertThat(taken.token().value())
        .as("the token after the blob was deleted and created again")
        .isGreaterThan(lease.token().value());
    b.release(taken);
  }

  @Test
  void tokensNeverRepeatAfterTheBlobIsDeletedAndCreatedAgain() {
    String election = newElection();
    AzureBlobLeaseStore a = store();
    Lease first = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    a.release(first);
    blob(election).delete();

    // Another process, which never saw the blob, at once.
    Lease second = store().tryAcquire(election, "b", TTL).lease().orElseThrow();

    assertThat(second.token().value()).isGreaterThan(first.token().value());
    a.release(second);
  }

  @Test
  void anInfiniteLeaseBatonDidNotGrantIsHeldBySomeoneElseNotByTheLastHolder() {
    String election = newElection();
    AzureBlobLeaseStore a = store();
    AzureBlobLeaseStore b = store();
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    operator(election, null).breakLeaseWithResponse(0, null, null, null);
    BlobLeaseClient other = operator(election, UUID.randomUUID().toString());
    other.acquireLease(-1);

    assertThatThrownBy(() -> a.renew(lease)).isInstanceOf(LeaseLostException.class);
    for (AzureBlobLeaseStore s : new AzureBlobLeaseStore[] {a, b}) {
      LeaseRecord shown = s.tryAcquire(election, "a", TTL).holder().orElseThrow();
      assertThat(shown.holder()).isEqualTo(AzureBlobLeaseStore.NOT_BATONS);
      assertThat(s.read(election).map(LeaseRecord::holder))
          .contains(AzureBlobLeaseStore.NOT_BATONS);
    }
    other.releaseLease();
  }

  @Test
  void aFixedLeaseOfAnotherClientTakenAfterABreakIsHeldBySomeoneElse() {
    String election = newElection();
    AzureBlobLeaseStore a = store();
    AtomicLong now = new AtomicLong();
    AzureBlobLeaseStore b = store(now);
    a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    operator(election, null).breakLeaseWithResponse(0, null, null, null);
    assertThat(b.read(election).map(LeaseRecord::holder)).contains("a"); // broken: waited out
    BlobLeaseClient other = operator(election, UUID.randomUUID().toString());
    other.acquireLease(60);

    now.addAndGet(TTL.toNanos());
    assertThat(b.tryAcquire(election, "b", TTL).holder().map(LeaseRecord::holder))
        .contains(AzureBlobLeaseStore.NOT_BATONS);
    other.releaseLease();
  }

  @Test
  void theLeaseIdCannotBeDerivedFromWhatTheBlobShows() {
    String election = newElection();
    AzureBlobLeaseStore a = store();
    Lease lease = a.tryAcquire(election, "a", TTL).lease().orElseThrow();
    String holder = blob(election).getProperties().getMetadata().get("holder");
    // What the store derived its lease ids from, before issue 36.
    String derived =
        UUID.nameUUIDFromBytes(("baton-candidate:" + holder).getBytes(UTF_8)).toString();

    assertThatThrownBy(() -> operator(election, derived).releaseLease())
        .isInstanceOf(BlobStorageException.class)
        .satisfies(e -> assertThat(((BlobStorageException) e).getStatusCode()).isEqualTo(409));
    assertThat(blob(election).getProperties().getLeaseState()).isEqualTo(LeaseStateType.LEASED);
    Lease renewed = a.renew(lease);
    a.release(renewed);
    assertThat(blob(election).getProperties().getLeaseState()).isEqualTo(LeaseStateType.AVAILABLE);
  }

  @Test
  void aMetadataWriteLostAfterTheLeaseWasTakenReleasesTheLease() {
    String election = newElection();
    AtomicBoolean loseMetadataWrites = new AtomicBoolean();
    AzureBlobLeaseStore a =
        AzureBlobLeaseStore.builder(
                AzureBlobLeaseStoreProvider.clientBuilder(CALL_TIMEOUT)
                    .endpoint(Azurite.endpoint(azurite.address()))
                    .containerName(CONTAINER)
                    .credential(new StorageSharedKeyCredential(Azurite.ACCOUNT, Azurite.KEY))
                    .addPolicy(new LoseMetadataWrites(loseMetadataWrites))
                    .buildClient())
            .callTimeout(CALL_TIMEOUT)
            .build();
    loseMetadataWrites.set(true);

    assertThatThrownBy(() -> a.tryAcquire(election, "a", TTL))
        .isInstanceOf(LeaseStoreException.class);

    assertThat(blob(election).getProperties().getLeaseState())
        .as("the lease the failed grant took")
        .isEqualTo(LeaseStateType.AVAILABLE);
    Lease b = store().tryAcquire(election, "b", TTL).lease().orElseThrow();
    store().release(b);
  }

  /** Fails every metadata write before it is sent, while {@code on} is set: a lost write. */
  private static final class LoseMetadataWrites implements HttpPipelinePolicy {
    private final AtomicBoolean on;

    LoseMetadataWrites(AtomicBoolean on) {
      this.on = on;
    }

    private boolean loses(HttpPipelineCallContext context) {
      String query = context.getHttpRequest().getUrl().getQuery();
      return on.get() && query != null && query.contains("comp=metadata");
    }

    @Override
    public Mono<HttpResponse> process(
        HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
      return loses(context)
          ? Mono.error(new UncheckedIOException(new java.io.IOException("lost on the way")))
          : next.process();
    }

    @Override
    public HttpResponse processSync(
        HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
      if (loses(context)) {
        throw new UncheckedIOException(new java.io.IOException("lost on the way"));
      }
      return next.processSync();
    }
  }
}
