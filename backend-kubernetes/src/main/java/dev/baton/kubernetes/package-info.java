/**
 * Baton's Kubernetes backend: {@link dev.baton.kubernetes.KubernetesLeaseStore}, a lease store on
 * {@code coordination.k8s.io/v1} Lease objects through the fabric8 client, and {@link
 * dev.baton.kubernetes.KubernetesLeaseStoreProvider} for {@code election.backend=kubernetes}.
 *
 * <p>What it guarantees: every grant, renewal and release is a PUT guarded by the {@code
 * resourceVersion} last seen, so two candidates never both win from one version; expiry is judged
 * as client-go judges it, by each follower's own monotonic clock from when it saw the Lease change,
 * never by comparing clocks ({@link dev.baton.election.ObservedTimeLeaseStore}); the fencing token
 * is {@code leaseTransitions}, higher with every grant; each call ends within the call timeout, and
 * fabric8 does not retry it. A renewal whose PUT the API server applied after the client gave up is
 * not mistaken for a takeover: the next renewal finds the Lease still naming this holder and term
 * and keeps the term.
 *
 * <p>What it does not: a follower that sees a Lease for the first time waits a full lease duration,
 * even when the holder is long gone. The API server is not a fencing resource: pass the token to
 * the resources the leader writes. A Lease deleted by someone else is created afresh, with the next
 * token this process knows of; a process that never saw the old Lease starts again from 0 (see
 * docs/kubernetes.md).
 */
package dev.baton.kubernetes;
