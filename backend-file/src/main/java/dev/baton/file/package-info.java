/**
 * Leader election among processes of one host through a directory of its local file system: {@link
 * dev.baton.file.FileLeaseStore} and its provider ({@code election.backend=file}). It is the
 * embedded default of {@code elect}: nothing to install, and no candidate serves the store to the
 * others, so a candidate that is paused or killed delays the next leader by no more than its own
 * lease.
 *
 * <h2>What a lease is</h2>
 *
 * Each election is a directory of numbered version files ({@code 000000000042.lease}); the highest
 * number is the election's state: holder, fencing token, TTL, and the end of the lease on the
 * host's monotonic clock with the boot it belongs to. A grant, a renewal and a release each create
 * the next number. The content is written to a temporary file and synced first, then hard-linked to
 * the number, which fails if the number exists, then the directory is synced; only then is the
 * grant reported. So two candidates that read the same state cannot both write the next one (the
 * link is the compare-and-set), nobody ever reads half a version, and a reported grant survives a
 * crash. No lock is held, at any time, by anyone.
 *
 * <h2>What it guarantees</h2>
 *
 * <ul>
 *   <li><b>Exclusion.</b> A candidate is granted only over a version that showed no live holder
 *       when it was read, and only if nobody wrote after it. The lease ends at the start of the
 *       granting or renewing call plus its TTL, on {@code CLOCK_MONOTONIC} ({@code
 *       System.nanoTime()} on Linux), which all processes of a boot share.
 *   <li><b>Fencing.</b> The token is the number of the version that granted the term; renewals and
 *       the release carry it on. Numbers only grow, so tokens strictly increase, also after a crash
 *       of any candidate or of the host (the highest version is never deleted).
 *   <li><b>Failover.</b> A paused or killed holder is one whose versions stop; the others take the
 *       lease as soon as it has run out, at their next try (they poll every retry period; the store
 *       has no watch). A holder paused in the middle of a write delays nobody either.
 *   <li><b>Reboots.</b> A version records the boot id ({@code /proc/sys/kernel/random/boot_id}).
 *       One of another boot says when it ends on a clock that cannot be compared with this one's
 *       (an earlier boot, another host sharing the directory, a process restored from a
 *       checkpoint): it counts as live until its TTL has passed since this process first saw it.
 *       After a reboot the first grant waits one lease; a holder elsewhere that keeps renewing
 *       keeps everybody here out.
 *   <li><b>A directory deleted or restored.</b> Each process remembers the highest version it has
 *       read or written. Finding the directory lower ({@code git clean -xdf}, {@code rm -rf}, a
 *       restore from an older copy), it writes that version back and, for one lease (the longest it
 *       has seen in the election), grants nothing: tryAcquire fails with a {@link
 *       dev.baton.election.LeaseStoreException} that says so. A holder that still runs writes its
 *       own lease back at its next renewal and keeps it. A process that found a number taken when
 *       it tried to write it refuses the same way once that version is gone ({@code rm -rf} unlinks
 *       in directory order, hash order on ext4, so while it runs an older version can be the head
 *       again). A version written back carries when its writer found the directory gone back, and
 *       every process that reads it refuses for that same lease, whatever it remembers (also
 *       exactly that version, byte for byte) and also when it started since. So once a version is
 *       written back, tokens never repeat nor go backwards and no lease is granted over a live one;
 *       cleanup deletes only versions below one it saw at least ten seconds before and finds
 *       unchanged, never a grant made after the directory went back.
 * </ul>
 *
 * <p>Old versions are deleted ten seconds after a newer one was seen, so a directory holds a few
 * dozen small files per election. A write completed later than the call timeout after the read it
 * was based on is not trusted (the call fails), because the number it used might have been deleted
 * and created again; nor is a grant or renewal that, read again right after its link, is not the
 * highest version or no longer follows the version it was based on, unchanged.
 *
 * <h2>Limits</h2>
 *
 * <ul>
 *   <li><b>One host.</b> Every candidate runs on the host whose disk holds the directory: other
 *       hosts' clocks are not this one's. Directories on network and FUSE file systems (NFS, SMB,
 *       CephFS, sshfs, virtiofs, ...) are refused when the store is built.
 *   <li><b>One clock.</b> Processes in different time namespaces of one kernel agree (the offset in
 *       {@code /proc/self/timens_offsets} is taken out); virtual machines and hosts do not.
 *   <li><b>The directory is the state for a process that never read it.</b> A candidate started
 *       after the directory was deleted or restored, or one that had not read it since the state it
 *       went back to (also one that a half-done {@code rm -rf} left), cannot tell: it may be
 *       granted at once, with a token used before, until a process that remembers more writes back
 *       its version (at that process's next call); the holder of that grant loses it at its next
 *       renewal. Deleted with every candidate stopped, the tokens start again from 1. Likewise when
 *       {@code rm -rf} unlinks exactly the versions above the one a writer read, between its read
 *       and its link: the writer cannot tell, and holds a token a live holder has until one of them
 *       renews.
 *   <li>A lease cannot stop a paused leader from acting late: pass the token with its writes.
 * </ul>
 */
package dev.baton.file;
