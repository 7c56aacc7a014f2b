/**
 * Baton's Azure Blob Storage backend: {@link dev.baton.azureblob.AzureBlobLeaseStore}, a lease
 * store on one blob per election held with the blob's native lease, and {@link
 * dev.baton.azureblob.AzureBlobLeaseStoreProvider} for {@code election.backend=azure-blob}.
 *
 * <p>What it guarantees: a grant is Azure's own lease acquire (conditional on the blob's ETag), so
 * two candidates never hold the blob at once; expiry is judged by the service's clock; the fencing
 * token is a counter in the blob's metadata raised by an ETag-conditional write on every grant; a
 * renewal or release carries its term's ETag, so it never revives or frees a later term; each call
 * ends within the call timeout.
 *
 * <p>What it does not: leases shorter than 15 s or longer than 60 s (Azure's limits); watching
 * (Azure cannot watch a blob, so followers poll); guarded writes to other blobs in one transaction.
 */
package dev.baton.azureblob;
