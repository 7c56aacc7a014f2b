/**
 * Baton's DynamoDB backend: {@link dev.baton.dynamodb.DynamoDbLeaseStore}, a lease store on one
 * DynamoDB item per election, and {@link dev.baton.dynamodb.DynamoDbLeaseStoreProvider} for {@code
 * election.backend=dynamodb}.
 *
 * <p>What it guarantees: every grant, renewal and release is a conditional write on the item's
 * version, so two candidates never both win from one version; reads are strongly consistent; expiry
 * is judged by each follower's own monotonic clock from when it saw the item change, never by
 * comparing clocks ({@link dev.baton.election.ObservedTimeLeaseStore}); the fencing token is the
 * item's {@code term}, higher with every grant; each call ends within the call timeout, all its
 * requests and the SDK's retries together; a global table (replicas in other regions, where
 * conditional writes do not hold across regions) is refused unless allowed.
 *
 * <p>What it does not: a follower that sees an item for the first time waits a full lease duration,
 * even when the holder is long gone; followers poll (DynamoDB cannot watch one item). DynamoDB is a
 * fencing resource only for writes that carry the token in their own condition (see
 * docs/dynamodb.md); a guarded write in one {@code TransactWriteItems} is not offered, since no
 * server that runs here can test it.
 */
package dev.baton.dynamodb;
