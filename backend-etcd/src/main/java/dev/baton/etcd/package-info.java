/**
 * Baton's etcd backend: {@link dev.baton.etcd.EtcdLeaseStore}, a lease store on etcd v3 through
 * jetcd, and {@link dev.baton.etcd.EtcdLeaseStoreProvider} for {@code election.backend=etcd}.
 *
 * <p>What it guarantees: a grant holds until at least the start of its last successful renewal plus
 * {@link dev.baton.election.Lease#ttl()}, judged by etcd's own lease expiry, never by a client
 * clock; fencing tokens (the election key's {@code mod_revision}) grow with every grant; writes
 * made through {@link dev.baton.etcd.EtcdLeaseStore#guarded} apply only while the term lasts. What
 * it does not: it cannot stop a leader's process from acting after its lease ended on writes that
 * bypass {@code guarded} and ignore the token; give those resources the token.
 */
package dev.baton.etcd;
