package dev.baton.azureblob;

import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.specialized.BlobLeaseClientBuilder;
import dev.baton.conformance.ProxiedServerFixture;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * Conformance fixture for Azure Blob Storage: one Azurite process on loopback, and per node a
 * client of its own whose endpoint is that node's {@link dev.baton.conformance.FaultProxy}, so
 * cutting or blackholing the proxy cuts off that node alone. The container is created by the first
 * store.
 */
// close() is ProxiedServerFixture's, which may throw what closing a server throws.
@SuppressWarnings("try")
final class AzureBlobFixture extends ProxiedServerFixture {

  /**
   * Azure's shortest lease, 15 s, with the renew deadline and retry period in the same proportion
   * as {@link Timings#SHORT}'s (3 s / 2 s / 500 ms) would be far slower than needed: renewing every
   * 2 s keeps the number of scenarios' round trips like the others', and a 10 s deadline leaves
   * room for a renewal that times out.
   */
  static final Timings TIMINGS =
      new Timings(
          Duration.ofSeconds(15),
          Duration.ofSeconds(10),
          Duration.ofMillis(500),
          Timings.SHORT.allowance());

  /** Well under the renew deadline: a grant is up to four round trips, all within it. */
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);

  static final String CONTAINER = "baton-conformance";

  private Azurite azurite;

  @Override
  protected List<InetSocketAddress> startServers() {
    azurite = Azurite.start();
    return List.of(azurite.address());
  }

  @Override
  protected LeaseStore openStore(String node, List<InetSocketAddress> through) {
    return AzureBlobLeaseStore.builder(Azurite.container(through.get(0), CONTAINER, CALL_TIMEOUT))
        .callTimeout(CALL_TIMEOUT)
        .createContainer(true)
        .build();
  }

  @Override
  protected void stopServers() {
    if (azurite != null) {
      azurite.close();
    }
  }

  @Override
  public boolean canDeleteLeases() {
    return true;
  }

  /**
   * Breaks the blob's lease at once and deletes the blob, straight on Azurite as an operator would:
   * nobody is told, so the leader learns at its next renewal.
   */
  @Override
  public void deleteLease(String election) {
    BlobClient blob =
        Azurite.container(azurite.address(), CONTAINER, CALL_TIMEOUT).getBlobClient(election);
    new BlobLeaseClientBuilder()
        .blobClient(blob)
        .buildClient()
        .breakLeaseWithResponse(0, null, null, Context.NONE);
    blob.delete();
  }

  @Override
  public Timings timings() {
    return TIMINGS;
  }

  @Override
  public List<String> refusedElectionNames() {
    return List.of("x".repeat(1025), "ends-with-a-dot.");
  }
}
