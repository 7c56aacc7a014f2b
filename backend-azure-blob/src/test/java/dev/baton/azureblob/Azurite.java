package dev.baton.azureblob;

import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.common.StorageSharedKeyCredential;
import dev.baton.conformance.FreezableServer;
import dev.baton.conformance.NpmServer;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Azurite's blob service (npm, MIT; in memory) on a free loopback port, from the copy {@code
 * scripts/test} installs with {@code npm ci} in {@code tools/azurite} ({@link NpmServer}).
 */
final class Azurite implements AutoCloseable {

  static final String ACCOUNT = "devstoreaccount1";

  /**
   * Azurite's well-known development key, published in its README: no secret, but still never
   * logged.
   */
  static final String KEY =
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

  private final NpmServer server;

  private Azurite(NpmServer server) {
    this.server = server;
  }

  static Azurite start() {
    return new Azurite(NpmServer.azuriteBlob());
  }

  InetSocketAddress address() {
    return server.address();
  }

  /** The Azurite process, to freeze with SIGSTOP and thaw. */
  FreezableServer process() {
    return server;
  }

  /** The account's blob endpoint at {@code address} (the server's own, or a proxy's). */
  static String endpoint(InetSocketAddress address) {
    return "http://127.0.0.1:" + address.getPort() + "/" + ACCOUNT;
  }

  static String connectionString(InetSocketAddress address) {
    return "DefaultEndpointsProtocol=http;AccountName="
        + ACCOUNT
        + ";AccountKey="
        + KEY
        + ";BlobEndpoint="
        + endpoint(address)
        + ";";
  }

  /**
   * A client of {@code container} at {@code address}, no retries, each request bounded by {@code
   * callTimeout}.
   */
  static BlobContainerClient container(
      InetSocketAddress address, String container, Duration callTimeout) {
    return AzureBlobLeaseStoreProvider.clientBuilder(callTimeout)
        .endpoint(endpoint(address))
        .containerName(container)
        .credential(new StorageSharedKeyCredential(ACCOUNT, KEY))
        .buildClient();
  }

  @Override
  public void close() {
    server.close();
  }
}
