/**
 * Baton's Azure Blob Storage backend: {@link dev.baton.azureblob.AzureBlobLeaseStore}, a lease
 * store on one blob per election held with the blob's native lease, and {@link
 * dev.baton.azureblob.AzureBlobLeaseStoreProvider} for {@code election.backend=azure-blob}.
 *
 * <p>What it guarantees: a grant is Azure's own lease acquire (conditional on the blob's ETag), so
 * two candidates never hold the blob at once; expiry is judged by the service's clock, and a lease
 * broken, released or deleted behind its holder's back is waited out for a lease duration; the
 * fencing token, in the blob's metadata, rises on every grant, also across a deletion of the blob;
 * a renewal or release carries its term's random lease id and ETag, so it never revives or frees a
 * later term; each call ends within the call timeout; no SAS or key reaches a log or an exception.
 *
 * <p>What it does not: leases shorter than 15 s or longer than 60 s (Azure's limits); watching
 * (Azure cannot watch a blob, so followers poll); guarded writes to other blobs in one transaction.
 */
package dev.baton.azureblob;
