package dev.baton.dynamodb;

import dev.baton.conformance.ProxiedServerFixture;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Conformance fixture for DynamoDB: one dynalite process on loopback, and per node a client of its
 * own whose endpoint is that node's {@link dev.baton.conformance.FaultProxy}, so cutting or
 * blackholing the proxy cuts off that node alone. The table is created by the first store.
 */
// close() is ProxiedServerFixture's, which may throw what closing a server throws.
@SuppressWarnings("try")
final class DynamoDbFixture extends ProxiedServerFixture {

  /**
   * A third of the renew deadline, as the other proxied fixtures use: a whole call, all its
   * requests together, ends within it.
   */
  static final Duration CALL_TIMEOUT = Timings.SHORT.renewDeadline().dividedBy(3);

  static final String TABLE = "baton-conformance";

  private Dynalite dynalite;

  @Override
  protected List<InetSocketAddress> startServers() {
    dynalite = Dynalite.start();
    return List.of(dynalite.address());
  }

  @Override
  protected LeaseStore openStore(String node, List<InetSocketAddress> through) {
    var client = closeLater(Dynalite.client(through.get(0), CALL_TIMEOUT));
    return DynamoDbLeaseStore.builder(client)
        .table(TABLE)
        .callTimeout(CALL_TIMEOUT)
        .createTable(true)
        .build();
  }

  @Override
  protected void stopServers() {
    if (dynalite != null) {
      dynalite.close();
    }
  }

  @Override
  public boolean canDeleteLeases() {
    return true;
  }

  /**
   * Deletes the election's item straight on dynalite, through none of the nodes' clients: nobody is
   * told, so the leader learns at its next renewal.
   */
  @Override
  public void deleteLease(String election) {
    try (var client = Dynalite.client(dynalite.address(), CALL_TIMEOUT)) {
      client.deleteItem(
          d ->
              d.tableName(TABLE)
                  .key(Map.of(DynamoDbRecordStore.ELECTION, AttributeValue.fromS(election))));
    }
  }

  @Override
  public boolean judgesExpiryOnServer() {
    return false; // each follower counts the item's lease duration from when it saw the item change
  }

  @Override
  public List<String> refusedElectionNames() {
    return List.of("x".repeat(2049));
  }
}
