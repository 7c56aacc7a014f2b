/**
 * Baton's JDBC backend: a {@link dev.baton.election.LeaseStore} on one SQL table, for PostgreSQL,
 * MariaDB, MySQL and H2. Public: {@link dev.baton.jdbc.JdbcLeaseStore} (with its builder and
 * guarded writes) and {@link dev.baton.jdbc.JdbcLeaseStoreProvider} ({@code
 * election.backend=jdbc}).
 *
 * <p>What it guarantees: a grant is decided by one conditional statement evaluated by the database
 * against its own clock, so candidates never compare their clocks; the {@code term} column strictly
 * increases with every grant and is the fencing token, and since every grant sets it to at least
 * the database clock in microseconds it keeps increasing when the row is lost (a table re-created,
 * a restore, a failover to a replica behind), unless that clock steps back; a renewal or release
 * only touches the row while it still shows the caller's holder and term; every call ends by its
 * call timeout, also when a link that stopped acknowledging blocks a write (the connection is
 * aborted at the deadline).
 *
 * <p>What it does not: a lease cannot stop a paused leader from acting late, and a guarded write
 * holds its lease row's lock, so renewals of that election (and, on PostgreSQL, of every election
 * in the same batch) wait for it: keep guarded writes short. Pass the token to the resources the
 * leader writes, or, when they live in the same database, write through {@link
 * dev.baton.jdbc.JdbcLeaseStore#inTerm}, which commits only while the row shows the caller's term.
 * On PostgreSQL followers hear grants and releases at once and learn of a holder that stopped
 * renewing when its lease runs out, without asking: grants and renewals notify when their lease
 * runs out, and the store's LISTEN thread counts from the notification's arrival (never early). On
 * MariaDB, MySQL and H2 followers poll. MariaDB must be 10.6 or later (INSERT ... RETURNING, SKIP
 * LOCKED). MySQL is supported by similar SQL but was not tested against a MySQL server.
 */
package dev.baton.jdbc;
