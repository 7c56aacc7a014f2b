/**
 * Baton's Consul backend: {@link dev.baton.consul.ConsulLeaseStore}, a lease store on Consul
 * sessions and KV locks through kiwiproject's consul-client, and {@link
 * dev.baton.consul.ConsulLeaseStoreProvider} for {@code election.backend=consul}.
 *
 * <p>What it guarantees: a grant holds until at least the start of its last successful renewal plus
 * {@link dev.baton.election.Lease#ttl()}, judged by Consul's session TTL, never by a client clock;
 * fencing tokens (the Raft index of the write that locked the key) grow with every grant. What it
 * does not: Consul invalidates a session up to about twice its TTL after its last renewal, so a
 * crashed leader's successor may wait up to twice the lease duration.
 */
package dev.baton.consul;
