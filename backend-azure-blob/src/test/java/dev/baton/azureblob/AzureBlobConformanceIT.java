package dev.baton.azureblob;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;

/**
 * The whole conformance suite on Azure blob leases, against Azurite on loopback (see {@link
 * AzureBlobFixture}).
 */
class AzureBlobConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new AzureBlobFixture();
  }
}
