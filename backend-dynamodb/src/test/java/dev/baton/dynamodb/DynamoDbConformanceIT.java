package dev.baton.dynamodb;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;

/**
 * The whole conformance suite on DynamoDB items, against dynalite on loopback (see {@link
 * DynamoDbFixture}).
 */
class DynamoDbConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new DynamoDbFixture();
  }
}
