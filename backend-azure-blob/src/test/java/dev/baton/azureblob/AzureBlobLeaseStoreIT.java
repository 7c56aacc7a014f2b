package dev.baton.azureblob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobProperties;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.LeaseStateType;
import com.azure.storage.blob.options.BlockBlobSimpleUploadOptions;
import com.azure.storage.blob.specialized.BlobLeaseClientBuilder;
import dev.baton.conformance.CapturedLog;
import dev.baton.election.Acquisition;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.Elector;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The store against Azurite: the blob it writes, contention, expiry, lease durations, the provider,
 * and fencing at a resource.
 */
class AzureBlobLeaseStoreIT {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration TTL = Duration.ofSeconds(15);
  private static final String CONTAINER = "baton-it";

  private static Azurite azurite;
  private static BlobContainerClient container;
  private static AzureBlobLeaseStore store;

  @BeforeAll
  static void start() {
    azurite = Azurite.start();
    container = Azurite.container(azurite.address(), CONTAINER, CALL_TIMEOUT);
    store =
        AzureBlobLeaseStore.builder(container)
            .callTimeout(CALL_TIMEOUT)
            .createContainer(true)
            .build();
  }

  @AfterAll
  static void stop() {
    if (store != null) {
      store.close();
    }
    if (azurite != null) {
      azurite.close();
    }
  }

  private static String newElection() {
    return "it-" + UUID.randomUUID();
  }

  private static BlobProperties blob(String election) {
    return container.getBlobClient(election).getProperties();
  }

  @Test
  void oneBlobPerElectionHeldByItsLeaseWithHolderAndTermInItsMetadata() {
    String election = newElection();
    Lease first = store.tryAcquire(election, "a b/ü", TTL).lease().orElseThrow();
    BlobProperties granted = blob(election);
    assertThat(granted.getLeaseState()).isEqualTo(LeaseStateType.LEASED);
    assertThat(granted.getMetadata())
        .containsEntry("holder", "a+b%2F%C3%BC")
        .containsEntry("term", Long.toString(first.token().value()))
        .containsEntry("leaseseconds", "15");
    assertThat(store.read(election).orElseThrow().holder()).isEqualTo("a b/ü");

    Lease renewed = store.renew(first);
    assertThat(renewed.token()).isEqualTo(first.token());
    assertThat(blob(election).getETag())
        .as("a renewal writes nothing")
        .isEqualTo(granted.getETag());

    store.release(renewed);
    BlobProperties released = blob(election);
    assertThat(released.getLeaseState()).isEqualTo(LeaseStateType.AVAILABLE);
    assertThat(released.getMetadata())
        .doesNotContainKey("holder")
        .containsEntry("term", Long.toString(first.token().value()));
    assertThat(store.read(election)).isEmpty();

    Lease again = store.tryAcquire(election, "a b/ü", TTL).lease().orElseThrow();
    // A live lease is never granted again, not even under its holder's own lease id.
    LeaseRecord own = store.tryAcquire(election, "a b/ü", TTL).holder().orElseThrow();
    assertThat(List.of(own.holder(), own.token())).containsExactly("a b/ü", again.token());
    store.release(again);
    Lease regranted = store.tryAcquire(election, "a b/ü", TTL).lease().orElseThrow();
    assertThat(List.of(first.token(), again.token(), regranted.token()))
        .as("a higher token on every grant")
        .isSortedAccordingTo(Comparator.comparingLong(FencingToken::value))
        .doesNotHaveDuplicates();
    assertThatThrownBy(() -> store.renew(again))
        .as("the term before the holder's release and new grant")
        .isInstanceOf(LeaseLostException.class);
    store.release(again); // not this term's any more: leaves the current one alone
    assertThat(store.read(election).orElseThrow().token()).isEqualTo(regranted.token());
    store.release(regranted);
  }

  @Test
  void candidatesRacingForOneBlobGetOneGrantAndNoLogLineAboutTheirConflicts() {
    String election = newElection();
    List<AzureBlobLeaseStore> stores =
        IntStream.range(0, 4)
            .mapToObj(i -> AzureBlobLeaseStore.builder(container).callTimeout(CALL_TIMEOUT).build())
            .collect(Collectors.toList());
    try (CapturedLog log = CapturedLog.start()) {
      List<CompletableFuture<Acquisition>> attempts =
          IntStream.range(0, stores.size())
              .mapToObj(
                  i ->
                      CompletableFuture.supplyAsync(
                          () -> stores.get(i).tryAcquire(election, "c" + i, TTL)))
              .collect(Collectors.toList());
      List<Acquisition> results =
          attempts.stream().map(CompletableFuture::join).collect(Collectors.toList());

      assertThat(results.stream().filter(Acquisition::isGranted)).hasSize(1);
      assertThat(log.linesAtWarnOrAbove()).as("warnings and errors, the SDK's included").isEmpty();
      assertThat(log.text())
          .doesNotContain("LeaseAlreadyPresent")
          .doesNotContain("ConditionNotMet");
    } finally {
      stores.forEach(LeaseStore::close);
    }
  }

  /**
   * Azurite renews an expired lease although the blob changed since (Azurite issue 2352), and Azure
   * renews one nobody took since: the store refuses by its own clock, before it asks.
   */
  @Test
  void aRenewalAfterTheLeaseRanOutIsRefusedAlthoughTheServerWouldRenewIt() {
    AtomicLong now = new AtomicLong();
    AzureBlobLeaseStore clocked =
        AzureBlobLeaseStore.builder(container).callTimeout(CALL_TIMEOUT).clock(now::get).build();
    String election = newElection();
    Lease lease = clocked.tryAcquire(election, "a", TTL).lease().orElseThrow();
    now.addAndGet(TTL.toNanos());
    assertThatThrownBy(() -> clocked.renew(lease))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("ran out");

    Awaitility.await("until Azurite lets the lease of " + election + " expire")
        .atMost(TTL.multipliedBy(2))
        .until(() -> store.read(election).isEmpty());
    var raw =
        new BlobLeaseClientBuilder()
            .blobClient(container.getBlobClient(election))
            .leaseId(AzureBlobLeaseStore.leaseIdOf(lease))
            .buildClient();
    raw.renewLease(); // what the store must not rely on: the server renews an expired lease
    assertThat(blob(election).getLeaseState()).isEqualTo(LeaseStateType.LEASED);
    raw.releaseLease();
  }

  @Test
  void leaseDurationsAzureDoesNotGrantAreRefusedWhenTheElectorIsBuilt() {
    assertThatThrownBy(
            () ->
                Elector.builder(store)
                    .election(newElection())
                    .candidate("a")
                    .leaseDuration(Duration.ofSeconds(10))
                    .renewDeadline(Duration.ofSeconds(6))
                    .retryPeriod(Duration.ofSeconds(1))
                    .build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("leaseDuration (election.lease-duration): 10s")
        .hasMessageContaining("15s to 60s");
    assertThatThrownBy(
            () ->
                Elector.builder(store)
                    .election(newElection())
                    .candidate("a")
                    .leaseDuration(Duration.ofSeconds(61))
                    .build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("61s");
    assertThatThrownBy(() -> store.tryAcquire(newElection(), "a", Duration.ofMillis(60_500)))
        .isInstanceOf(ConfigurationException.class);

    String election = newElection();
    Lease rounded =
        store.tryAcquire(election, "a", Duration.ofMillis(15_500)).lease().orElseThrow();
    assertThat(rounded.ttl())
        .as("a TTL rounded up to Azure's whole seconds")
        .isEqualTo(Duration.ofSeconds(16));
    store.release(rounded);
  }

  @Test
  void aMissingContainerIsNamedWithTheSettingThatCreatesIt() {
    AzureBlobLeaseStore noContainer =
        AzureBlobLeaseStore.builder(
                Azurite.container(azurite.address(), "no-such-container", CALL_TIMEOUT))
            .build();
    assertThatThrownBy(() -> noContainer.tryAcquire(newElection(), "a", TTL))
        .isInstanceOf(LeaseStoreException.class)
        .hasMessageContaining("ContainerNotFound")
        .hasMessageContaining("election.azure-blob.create-container=true");
  }

  @Test
  void theProviderOpensAStoreFromAConnectionStringAndShowsNoKey() {
    Properties p = new Properties();
    p.setProperty(ElectionProperties.BACKEND, "azure-blob");
    p.setProperty(
        AzureBlobLeaseStoreProvider.CONNECTION_STRING, Azurite.connectionString(azurite.address()));
    p.setProperty(AzureBlobLeaseStoreProvider.CONTAINER, "baton-provider-it");
    p.setProperty(AzureBlobLeaseStoreProvider.CREATE_CONTAINER, "true");
    p.setProperty(ElectionProperties.LEASE_DURATION, "20s");
    ElectionProperties properties = ElectionProperties.of(p);
    assertThat(properties.toString()).doesNotContain(Azurite.KEY);
    try (LeaseStore opened = properties.openStore()) {
      assertThat(opened).isInstanceOf(AzureBlobLeaseStore.class);
      assertThat(opened.describe())
          .isEqualTo(
              "azure-blob (container baton-provider-it at http://127.0.0.1:"
                  + azurite.address().getPort()
                  + "/devstoreaccount1/baton-provider-it)");
      assertThat(opened.tryAcquire(newElection(), "a", TTL).isGranted()).isTrue();
    }
  }

  /** The fencing example of docs/azure-blob.md: a write to another blob refuses a stale token. */
  @Test
  void aWriteGuardedByTheTokenInTheTargetsMetadataRefusesAStaleToken() {
    String election = newElection();
    BlobClient invoice = container.getBlobClient("invoices/run-42-" + election);
    Lease old = store.tryAcquire(election, "a", TTL).lease().orElseThrow();
    assertThat(writeFenced(invoice, "paid by a", old.token())).isTrue();
    store.release(old);
    Lease newer = store.tryAcquire(election, "b", TTL).lease().orElseThrow();
    assertThat(writeFenced(invoice, "paid by b", newer.token())).isTrue();

    assertThat(writeFenced(invoice, "late write of a", old.token())).isFalse();
    assertThat(invoice.downloadContent().toString()).isEqualTo("paid by b");
    assertThat(invoice.getProperties().getMetadata())
        .containsEntry("fencingtoken", Long.toString(newer.token().value()));
    store.release(newer);
  }

  /**
   * The example of docs/azure-blob.md, as it stands there: the token the blob last accepted is in
   * its metadata, and the write is conditional on the ETag under which that token was read.
   */
  static boolean writeFenced(BlobClient target, String content, FencingToken token) {
    BlobRequestConditions unchanged;
    try {
      BlobProperties current = target.getProperties();
      String accepted = current.getMetadata().getOrDefault("fencingtoken", "-1");
      if (Long.parseLong(accepted) > token.value()) {
        return false; // a newer leader wrote already
      }
      unchanged = new BlobRequestConditions().setIfMatch(current.getETag());
    } catch (BlobStorageException e) {
      if (e.getStatusCode() != 404) {
        throw e;
      }
      unchanged = new BlobRequestConditions().setIfNoneMatch("*");
    }
    try {
      target
          .getBlockBlobClient()
          .uploadWithResponse(
              new BlockBlobSimpleUploadOptions(BinaryData.fromString(content))
                  .setMetadata(Map.of("fencingtoken", Long.toString(token.value())))
                  .setRequestConditions(unchanged),
              null,
              Context.NONE);
      return true;
    } catch (BlobStorageException e) {
      if (e.getStatusCode() == 412 || e.getStatusCode() == 409) {
        return false; // written in between: read again and decide again
      }
      throw e;
    }
  }
}
