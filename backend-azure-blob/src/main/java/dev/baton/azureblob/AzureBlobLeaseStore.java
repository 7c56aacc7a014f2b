package dev.baton.azureblob;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.RequestConditions;
import com.azure.core.http.rest.Response;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobErrorCode;
import com.azure.storage.blob.models.BlobProperties;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.LeaseDurationType;
import com.azure.storage.blob.models.LeaseStateType;
import com.azure.storage.blob.options.AppendBlobCreateOptions;
import com.azure.storage.blob.specialized.BlobLeaseClient;
import com.azure.storage.blob.specialized.BlobLeaseClientBuilder;
import dev.baton.election.Acquisition;
import dev.baton.election.CallTimeout;
import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.FencingToken;
import dev.baton.election.Lease;
import dev.baton.election.LeaseLostException;
import dev.baton.election.LeaseRecord;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreException;
import dev.baton.election.MonotonicClock;
import dev.baton.election.UrlSecrets;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election on Azure Blob Storage: one blob per election in one container, held with the
 * blob's own lease.
 *
 * <pre>{@code
 * AzureBlobLeaseStore store = AzureBlobLeaseStore.builder(containerClient).build();
 * }</pre>
 *
 * <p>Azure judges expiry: a lease runs out on the service's clock, so a fresh candidate takes an
 * expired lease at once. Azure grants leases of 15 to 60 s only; an elector with another lease
 * duration is refused when it is built ({@link #checkLeaseDuration}), and a TTL with a fraction of
 * a second is rounded up to whole seconds (the lease's {@link Lease#ttl()} says so). The fencing
 * token is in the blob's metadata, written by an ETag-conditional write on every grant: the
 * previous term plus one, or the second of Azure's clock times {@link #TOKENS_PER_SECOND} if that
 * is higher, so that tokens keep rising when the blob is deleted. Each grant's lease id is random
 * and known to its holder alone. A lease taken from its holder by someone else (broken, released
 * with its id, deleted) is waited out for a lease duration from when this process saw it; a lease
 * Baton did not grant is shown as {@link #NOT_BATONS}. Azure cannot watch a blob, so followers poll
 * at the retry period.
 *
 * <p>The container client stays the caller's: the store never closes anything it was given. Each
 * call ends within the call timeout (default 3 s; at most half the renew deadline, see {@link
 * CallTimeout}), whatever the client's own timeouts and retries.
 */
public final class AzureBlobLeaseStore implements LeaseStore {

  public static final Duration DEFAULT_CALL_TIMEOUT = CallTimeout.DEFAULT;
  public static final String DEFAULT_CONTAINER = "baton-elections";

  /** The shortest and longest lease Azure Blob Storage grants (besides an infinite one). */
  public static final Duration MIN_LEASE = Duration.ofSeconds(15);

  public static final Duration MAX_LEASE = Duration.ofSeconds(60);

  static final String HOLDER = "holder";
  static final String TERM = "term";
  static final String LEASE_SECONDS = "leaseseconds";

  /** Azure's limit for a blob name. */
  private static final int MAX_BLOB_NAME = 1024;

  /** How often one tryAcquire reads again when the blob changed under it before it answers. */
  private static final int ATTEMPTS_BEFORE_ANSWERING = 10;

  /** The pause before reading again after a race. */
  private static final Duration RACE_PAUSE = Duration.ofMillis(10);

  /** The pause before reading a new blob again, until Azure's clock is in the next second. */
  private static final Duration NEXT_SECOND_PAUSE = Duration.ofMillis(100);

  /**
   * Tokens per second of Azure's clock: a grant's token is at least the second of the read it
   * started from times this, so tokens keep increasing across a deletion of the blob as long as an
   * election sees fewer grants than this in a second (each takes two writes to one blob).
   */
  static final long TOKENS_PER_SECOND = 1_000_000;

  private static final Logger log = LoggerFactory.getLogger(AzureBlobLeaseStore.class);

  /** What a follower shows while a grant is between its lease and its metadata write. */
  static final String UNRECORDED_HOLDER = "(a candidate whose grant is in progress)";

  /** What a follower shows while the blob is leased by someone other than a Baton candidate. */
  static final String NOT_BATONS = "(a lease Baton did not grant)";

  private final BlobContainerClient container;
  private final Duration callTimeout;
  private final MonotonicClock clock;
  private final String where;

  /** Per election: what this process last saw of the blob. */
  private final ConcurrentMap<String, Sight> sights = new ConcurrentHashMap<>();

  /**
   * Per election: the lease ids of grants this store began and could not complete (the acquire or
   * metadata write failed), and of terms whose release failed, to release before its next attempt:
   * nobody leads under them, and Azure may have applied the request after its call gave up.
   */
  private final ConcurrentMap<String, Set<String>> orphans = new ConcurrentHashMap<>();

  private AzureBlobLeaseStore(Builder b) {
    this.container = b.container;
    this.callTimeout = b.callTimeout;
    this.clock = b.clock;
    this.where = UrlSecrets.redact(withoutQuery(container.getBlobContainerUrl()));
  }

  /** Starts a store on {@code container}, which the caller owns. */
  public static Builder builder(BlobContainerClient container) {
    return new Builder(requireNonNull(container, "container"));
  }

  /**
   * Refuses a lease duration Azure does not grant: outside 15 to 60 s once rounded up to whole
   * seconds.
   */
  @Override
  public void checkLeaseDuration(Duration leaseDuration) {
    checkLeaseDuration("leaseDuration (" + ElectionProperties.LEASE_DURATION + ")", leaseDuration);
  }

  static long checkLeaseDuration(String key, Duration leaseDuration) {
    requireNonNull(leaseDuration, key);
    long seconds = wholeSeconds(leaseDuration);
    if (leaseDuration.compareTo(MIN_LEASE) < 0 || seconds > MAX_LEASE.toSeconds()) {
      throw new ConfigurationException(
          key
              + ": "
              + (leaseDuration.getNano() == 0
                  ? leaseDuration.getSeconds() + "s"
                  : leaseDuration.toMillis() + "ms")
              + " is not a lease Azure Blob Storage grants; use 15s to 60s");
    }
    return seconds;
  }

  private static long wholeSeconds(Duration d) {
    return d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
  }

  @Override
  public Acquisition tryAcquire(String election, String candidate, Duration ttl) {
    checkElectionName(election);
    requireNonNull(candidate, "candidate");
    long seconds = checkLeaseDuration("ttl", ttl);
    long started = clock.nanoTime();
    long deadline = started + callTimeout.toNanos();
    BlobClient blob = container.getBlobClient(election);
    Sight sight = sight(election);
    for (String orphan : orphans.getOrDefault(election, Set.of())) {
      releaseOrphan(election, blob, orphan, deadline);
    }
    LeaseRecord seen = null;
    int races = 0;
    while (races < ATTEMPTS_BEFORE_ANSWERING) {
      Optional<Read> read = properties(election, blob, deadline);
      if (read.isEmpty()) {
        Optional<LeaseRecord> deleted = sight.deleted(clock.nanoTime());
        if (deleted.isPresent()) {
          return Acquisition.held(deleted.get());
        }
        create(election, blob, deadline);
        continue;
      }
      BlobProperties props = read.get().props();
      View view = sight.judge(props, clock.nanoTime());
      if (view.state() == State.UNRECORDED) {
        // Leased, and its holder not yet written: read again, so the answer names the holder.
        seen = view.record();
        races++;
        if (!pausedBeforeReadingAgain(deadline, RACE_PAUSE)) {
          break;
        }
        continue;
      }
      if (view.state() != State.FREE) {
        // Also when the holder is this candidate id: a live lease is never granted again.
        return Acquisition.held(view.record());
      }
      long term = term(election, props);
      long serverSecond = read.get().serverSecond();
      if ((props.getMetadata() == null || !props.getMetadata().containsKey(TERM))
          && serverSecond <= props.getLastModified().toEpochSecond()) {
        // A blob without a term may have been deleted and created again within this second of
        // Azure's clock, right after a grant on the old blob: its first token waits for the next
        // second, which is past every token of the old blob.
        if (!pausedBeforeReadingAgain(deadline, NEXT_SECOND_PAUSE)) {
          throw new LeaseStoreException(
              election,
              "blob '"
                  + election
                  + "' in "
                  + where
                  + " is new: its first term waits for the next second of Azure's clock, and"
                  + " the call timeout left no time for it; the elector tries again");
        }
        continue;
      }
      String etag = props.getETag();
      String leaseId = UUID.randomUUID().toString();
      BlobLeaseClient lease = leaseOf(blob, leaseId);
      try {
        call(
            election,
            "acquire the lease of",
            deadline,
            t ->
                lease.acquireLeaseWithResponse(
                    (int) seconds, new RequestConditions().setIfMatch(etag), t, Context.NONE));
      } catch (BlobStorageException e) {
        if (isContention(e)) {
          races++;
          continue; // another candidate leased or wrote it since the read: read again, then answer
        }
        throw failure(election, "acquire the lease of", e);
      } catch (LeaseStoreException e) {
        // Azure may have granted the lease after the call gave up: release it before the next try.
        orphan(election, leaseId);
        throw e;
      }
      long token = sight.nextToken(term, serverSecond);
      Map<String, String> metadata = metadata(candidate, token, seconds);
      String granted;
      try {
        granted =
            call(
                    election,
                    "raise the term of",
                    deadline,
                    t ->
                        blob.setMetadataWithResponse(
                            metadata,
                            new BlobRequestConditions().setLeaseId(leaseId).setIfMatch(etag),
                            t,
                            Context.NONE))
                .getHeaders()
                .getValue(HttpHeaderName.ETAG);
      } catch (BlobStorageException e) {
        if (isContention(e)) {
          races++;
          continue; // our new lease is gone already (a very slow call): start over
        }
        throw releasingOrphan(
            election, blob, leaseId, deadline, failure(election, "raise the term of", e));
      } catch (LeaseStoreException e) {
        throw releasingOrphan(election, blob, leaseId, deadline, e);
      }
      sight.granted(token);
      Lease grant =
          new Lease(
              election,
              candidate,
              FencingToken.of(token),
              Duration.ofSeconds(seconds),
              handle(started, leaseId, granted));
      return Acquisition.granted(grant);
    }
    if (seen != null) {
      return Acquisition.held(seen);
    }
    throw new LeaseStoreException(
        election,
        "blob '"
            + election
            + "' in "
            + where
            + " changed under every one of "
            + ATTEMPTS_BEFORE_ANSWERING
            + " attempts to acquire it; the elector tries again");
  }

  /**
   * A lease this store took for a grant it could not complete (the metadata write failed, or the
   * acquire's answer was lost): nobody was told of a term under it, so it is released, at once when
   * the call has time left, else at the next tryAcquire of the election. Returns {@code failure}.
   */
  private LeaseStoreException releasingOrphan(
      String election,
      BlobClient blob,
      String leaseId,
      long deadline,
      LeaseStoreException failure) {
    orphan(election, leaseId);
    try {
      releaseOrphan(election, blob, leaseId, deadline);
    } catch (LeaseStoreException e) {
      failure.addSuppressed(e);
    }
    return failure;
  }

  /**
   * Releases the lease {@code leaseId} if it is still the blob's, after clearing the holder its
   * metadata write may have recorded (a write applied after its call gave up), so that others see a
   * release and take the blob at once. A lease that is no longer {@code leaseId} (409, 412) or a
   * blob that is gone is left alone.
   */
  private void releaseOrphan(String election, BlobClient blob, String leaseId, long deadline) {
    Optional<Read> read = properties(election, blob, deadline);
    try {
      if (read.isPresent() && isLeased(read.get().props())) {
        BlobProperties props = read.get().props();
        if (holder(props).isPresent()) {
          Map<String, String> released = new HashMap<>(props.getMetadata());
          released.remove(HOLDER);
          call(
              election,
              "mark released",
              deadline,
              t ->
                  blob.setMetadataWithResponse(
                      released, new BlobRequestConditions().setLeaseId(leaseId), t, Context.NONE));
        }
        call(
            election,
            "release an unconfirmed lease of",
            deadline,
            t ->
                leaseOf(blob, leaseId)
                    .releaseLeaseWithResponse(new RequestConditions(), t, Context.NONE));
        log.debug("election '{}': released the lease of a grant that did not complete", election);
      }
    } catch (BlobStorageException e) {
      if (!isContention(e) && e.getStatusCode() != 404) {
        throw failure(election, "release an unconfirmed lease of", e);
      }
    }
    orphans.computeIfPresent(
        election,
        (e, ids) -> {
          ids.remove(leaseId);
          return ids.isEmpty() ? null : ids;
        });
  }

  private void orphan(String election, String leaseId) {
    orphans.computeIfAbsent(election, e -> ConcurrentHashMap.newKeySet()).add(leaseId);
  }

  /**
   * Waits {@code pause} before reading the blob again (after a race: another grant between its
   * lease and its metadata write takes one round trip); false when the call timeout leaves no time
   * for it and a read after it.
   */
  private boolean pausedBeforeReadingAgain(long deadline, Duration pause) {
    if (deadline - clock.nanoTime() < pause.toNanos() + RACE_PAUSE.toNanos()) {
      return false;
    }
    LockSupport.parkNanos(pause.toNanos());
    return !Thread.currentThread().isInterrupted();
  }

  /**
   * Renews the blob's lease with this term's lease id, only while the blob is unchanged since this
   * term's grant (If-Match on its ETag: every grant and release rewrites the metadata) and only
   * while the lease has not run out by this store's own clock. Azure renews an expired lease nobody
   * took since, and Azurite renews an expired lease even after the blob changed (Azurite issue
   * 2352); neither may revive a term its elector has given up for lost. A renewal Azure applied
   * after its call gave up changes nothing visible: the next one succeeds as usual.
   */
  @Override
  public Lease renew(Lease lease) {
    requireNonNull(lease, "lease");
    String election = lease.election();
    long started = clock.nanoTime();
    Handle handle = Handle.parse(lease.handle());
    if (started - handle.confirmedAt() >= lease.ttl().toNanos()) {
      throw new LeaseLostException(
          election,
          "the lease of blob '"
              + election
              + "' ran out "
              + Duration.ofNanos(started - handle.confirmedAt() - lease.ttl().toNanos()).toMillis()
              + " ms ago",
          null);
    }
    BlobClient blob = container.getBlobClient(election);
    try {
      call(
          election,
          "renew the lease of",
          started + callTimeout.toNanos(),
          t ->
              leaseOf(blob, handle.leaseId())
                  .renewLeaseWithResponse(
                      new RequestConditions().setIfMatch(handle.etag()), t, Context.NONE));
    } catch (BlobStorageException e) {
      if (isContention(e) || e.getStatusCode() == 404) {
        throw new LeaseLostException(
            election,
            "the lease of blob '"
                + election
                + "' is no longer term "
                + lease.token()
                + " of "
                + lease.candidate()
                + " (HTTP "
                + e.getStatusCode()
                + code(e)
                + ")",
            null);
      }
      throw failure(election, "renew the lease of", e);
    }
    return lease.renewed(lease.ttl(), handle(started, handle.leaseId(), handle.etag()));
  }

  /**
   * Marks the blob released (no holder, same term) and releases the lease, both with this term's
   * lease id and ETag, so a lease granted since, also to the same candidate, stays as it is.
   */
  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    String election = lease.election();
    long deadline = clock.nanoTime() + callTimeout.toNanos();
    Handle handle = Handle.parse(lease.handle());
    BlobClient blob = container.getBlobClient(election);
    BlobLeaseClient leaseClient = leaseOf(blob, handle.leaseId());
    try {
      Map<String, String> released = new HashMap<>();
      released.put(TERM, Long.toString(lease.token().value()));
      released.put(LEASE_SECONDS, Long.toString(lease.ttl().toSeconds()));
      String etag =
          call(
                  election,
                  "mark released",
                  deadline,
                  t ->
                      blob.setMetadataWithResponse(
                          released,
                          new BlobRequestConditions()
                              .setLeaseId(handle.leaseId())
                              .setIfMatch(handle.etag()),
                          t,
                          Context.NONE))
              .getHeaders()
              .getValue(HttpHeaderName.ETAG);
      call(
          election,
          "release the lease of",
          deadline,
          t ->
              leaseClient.releaseLeaseWithResponse(
                  new RequestConditions().setIfMatch(etag), t, Context.NONE));
    } catch (BlobStorageException e) {
      if (isContention(e) || e.getStatusCode() == 404) {
        return; // no longer this term's: somebody else's lease is not ours to release
      }
      orphan(election, handle.leaseId()); // as below: the next attempt releases it
      throw failure(election, "release the lease of", e);
    } catch (LeaseStoreException e) {
      // Either request may still be applied (a frozen server thaws, a held answer was a success):
      // a lease left without its holder would be waited out by everyone. The next attempt of this
      // store releases it if it is still this term's.
      orphan(election, handle.leaseId());
      throw e;
    }
  }

  /**
   * Releases the leases this store took in {@code election} for grants it could not complete (an
   * acquire whose answer was lost among them), as its next {@link #tryAcquire} would: for an
   * elector that stops instead of trying again. Their lease ids are random and this store's own,
   * and each release names its id, so no other lease, not even one the same candidate id holds in
   * another process, can be released by it.
   */
  @Override
  public void releaseUnanswered(String election, String candidate) {
    checkElectionName(election);
    requireNonNull(candidate, "candidate");
    Set<String> ids = orphans.get(election);
    if (ids == null) {
      return;
    }
    long deadline = clock.nanoTime() + callTimeout.toNanos();
    BlobClient blob = container.getBlobClient(election);
    for (String orphan : ids) {
      releaseOrphan(election, blob, orphan, deadline);
    }
  }

  /**
   * The holder as {@link #tryAcquire} would judge it: also a lease Baton did not grant ({@link
   * #NOT_BATONS}), and a lease broken, released by someone else or deleted while this process saw
   * it held, until a lease duration has passed since it saw that.
   */
  @Override
  public Optional<LeaseRecord> read(String election) {
    checkElectionName(election);
    BlobClient blob = container.getBlobClient(election);
    Sight sight = sight(election);
    long deadline = clock.nanoTime() + callTimeout.toNanos();
    for (int attempt = 1; ; attempt++) {
      Optional<Read> read = properties(election, blob, deadline);
      if (read.isEmpty()) {
        return sight.deleted(clock.nanoTime());
      }
      View view = sight.judge(read.get().props(), clock.nanoTime());
      // Leased, and its holder not yet written (a grant between its two requests): read again.
      if (view.state() != State.UNRECORDED
          || attempt >= ATTEMPTS_BEFORE_ANSWERING
          || !pausedBeforeReadingAgain(deadline, RACE_PAUSE)) {
        return Optional.ofNullable(view.record());
      }
    }
  }

  /**
   * Refuses what Azure cannot name a blob by: an empty name, one over 1024 characters, or one that
   * ends with '.' or '/' (Azure drops those).
   */
  @Override
  public void checkElectionName(String election) {
    requireNonNull(election, "election");
    if (election.isEmpty()
        || election.length() > MAX_BLOB_NAME
        || election.endsWith(".")
        || election.endsWith("/")) {
      throw new ConfigurationException(
          "election name '"
              + election
              + "' cannot name an Azure blob: use 1 to "
              + MAX_BLOB_NAME
              + " characters, not ending with '.' or '/', but it has "
              + election.length());
    }
  }

  @Override
  public String describe() {
    return "azure-blob (container " + container.getBlobContainerName() + " at " + where + ")";
  }

  /**
   * Nothing to close: the container client is the caller's, and Azure clients hold no connection of
   * their own.
   */
  @Override
  public void close() {}

  // ---------------------------------------------------------------- requests

  /** The blob's properties, and the second of Azure's clock at which it answered. */
  private record Read(BlobProperties props, long serverSecond) {}

  private Optional<Read> properties(String election, BlobClient blob, long deadline) {
    try {
      Response<BlobProperties> r =
          call(
              election,
              "read",
              deadline,
              t -> blob.getPropertiesWithResponse(null, t, Context.NONE));
      String date = r.getHeaders().getValue(HttpHeaderName.DATE);
      if (date == null) {
        throw new LeaseStoreException(
            election,
            "read blob '" + election + "' in " + where + ": the answer has no Date header");
      }
      return Optional.of(
          new Read(
              r.getValue(),
              ZonedDateTime.parse(date, DateTimeFormatter.RFC_1123_DATE_TIME).toEpochSecond()));
    } catch (BlobStorageException e) {
      if (e.getStatusCode() == 404 && !BlobErrorCode.CONTAINER_NOT_FOUND.equals(e.getErrorCode())) {
        return Optional.empty();
      }
      throw failure(election, "read", e);
    }
  }

  /** Creates the empty blob unless it exists; whoever creates it first, the blob is the same. */
  private void create(String election, BlobClient blob, long deadline) {
    try {
      // An empty append blob: created by a request without a body, like every other request of the
      // store.
      call(
          election,
          "create",
          deadline,
          t ->
              blob.getAppendBlobClient()
                  .createWithResponse(
                      new AppendBlobCreateOptions()
                          .setRequestConditions(new BlobRequestConditions().setIfNoneMatch("*")),
                      t,
                      Context.NONE));
    } catch (BlobStorageException e) {
      if (!isContention(e)) {
        throw failure(election, "create", e);
      }
    }
  }

  /**
   * Runs one request with what is left of the call's time. Azure's own answers come back as
   * BlobStorageException for the caller to judge; anything else (timeout, connection, interrupt)
   * becomes a LeaseStoreException.
   */
  private <T> T call(String election, String what, long deadline, Function<Duration, T> request) {
    long left = deadline - clock.nanoTime();
    if (left <= 0) {
      throw new LeaseStoreException(
          election,
          what
              + " blob '"
              + election
              + "' in "
              + where
              + ": no time left of the call timeout "
              + callTimeout.toMillis()
              + " ms");
    }
    try {
      return request.apply(Duration.ofNanos(left));
    } catch (BlobStorageException e) {
      throw e;
    } catch (RuntimeException e) {
      SdkFailure cause = SdkFailure.of(e);
      if (Thread.currentThread().isInterrupted()) {
        throw new LeaseStoreException(
            election, what + " blob '" + election + "' in " + where + ": interrupted", cause);
      }
      throw new LeaseStoreException(
          election,
          what
              + " blob '"
              + election
              + "' in "
              + where
              + " failed within the call timeout "
              + callTimeout.toMillis()
              + " ms: "
              + cause,
          cause);
    }
  }

  /** Another candidate's lease or write came first: a normal answer, never logged. */
  private static boolean isContention(BlobStorageException e) {
    return e.getStatusCode() == 409 || e.getStatusCode() == 412;
  }

  private LeaseStoreException failure(String election, String what, BlobStorageException e) {
    String hint =
        e.getStatusCode() == 403
            ? " (the store needs read, write and create on the container's blobs: a SAS with"
                + " permissions rwc, or the role Storage Blob Data Contributor on the container;"
                + " see docs/azure-blob.md)"
            : BlobErrorCode.CONTAINER_NOT_FOUND.equals(e.getErrorCode())
                ? " (create it, or set election.azure-blob.create-container=true; see docs/azure-blob.md)"
                : "";
    // The service's status only, and as the cause a copy that holds no request: the SDK's exception
    // carries the request's URL, SAS and all, for any logger that shows an exception's fields.
    return new LeaseStoreException(
        election,
        what
            + " blob '"
            + election
            + "' in "
            + where
            + " failed: HTTP "
            + e.getStatusCode()
            + code(e)
            + hint,
        SdkFailure.of(e));
  }

  /** Azure's error code, when the answer had one (a HEAD request's has none). */
  private static String code(BlobStorageException e) {
    return e.getErrorCode() == null ? "" : " " + e.getErrorCode();
  }

  // ---------------------------------------------------------------- the blob's contents

  /**
   * A client of the blob's lease {@code leaseId}. Each grant takes a random id (a version 4 UUID,
   * from a SecureRandom) that only its lease's handle holds: nobody who reads the blob can renew,
   * release or re-acquire a term's lease, and Azure lets no other grant's id touch it.
   */
  private static BlobLeaseClient leaseOf(BlobClient blob, String leaseId) {
    return new BlobLeaseClientBuilder().blobClient(blob).leaseId(leaseId).buildClient();
  }

  /** The lease id of {@code lease}'s grant, for tests that play a client Baton is not. */
  static String leaseIdOf(Lease lease) {
    return Handle.parse(lease.handle()).leaseId();
  }

  private static boolean isLeased(BlobProperties props) {
    return props.getLeaseState() == LeaseStateType.LEASED;
  }

  private static Map<String, String> metadata(String candidate, long term, long seconds) {
    Map<String, String> metadata = new HashMap<>();
    // Metadata travels in HTTP headers, which carry ASCII only: the id is percent-encoded.
    metadata.put(HOLDER, URLEncoder.encode(candidate, UTF_8));
    metadata.put(TERM, Long.toString(term));
    metadata.put(LEASE_SECONDS, Long.toString(seconds));
    return metadata;
  }

  private static Optional<String> holder(BlobProperties props) {
    return Optional.ofNullable(props.getMetadata())
        .map(m -> m.get(HOLDER))
        .filter(h -> !h.isEmpty())
        .map(h -> URLDecoder.decode(h, UTF_8));
  }

  private long term(String election, BlobProperties props) {
    String term = props.getMetadata() == null ? null : props.getMetadata().get(TERM);
    try {
      return term == null ? 0 : Long.parseLong(term);
    } catch (NumberFormatException e) {
      throw new LeaseStoreException(
          election,
          "blob '"
              + election
              + "' in "
              + where
              + " has metadata "
              + TERM
              + "='"
              + term
              + "', not an election's term",
          e);
    }
  }

  // ---------------------------------------------------------------- what this process saw

  private Sight sight(String election) {
    return sights.computeIfAbsent(election, Sight::new);
  }

  /** How a read of the blob is judged. */
  private enum State {
    /** Nobody holds it: released by Baton, never granted, or run out on Azure's clock. */
    FREE,
    /** Leased: by a Baton candidate, or by a client Baton is not ({@link #NOT_BATONS}). */
    HELD,
    /** Leased, its holder not yet written: a grant between its two requests. */
    UNRECORDED,
    /**
     * Taken from its holder by someone else (broken, released with its lease id, deleted): the
     * holder may lead on until its next renewal fails, so it counts as held for a lease duration
     * from when this process saw it.
     */
    VANISHED
  }

  private record View(State state, LeaseRecord record) {}

  /**
   * What this process last saw of one election's blob, so that it can tell a lease that vanished
   * from one that was released or ran out, and since when. Lease operations do not change a blob's
   * ETag, and every Baton grant and release writes the metadata, which does: a blob leased under
   * the ETag this process saw broken was leased by someone other than Baton. Its monitor guards it.
   */
  private final class Sight {
    private final String election;

    /** The ETag under which the blob was last seen taken from its holder, and since when. */
    private String vanishedEtag;

    private long vanishedAt;

    /** The last holder seen holding it (or vanished), while not seen free since. */
    private LeaseRecord lastHeld;

    /** When this process first saw the blob gone after {@link #lastHeld}; null while it exists. */
    private Long deletedAt;

    private long highestToken;

    Sight(String election) {
      this.election = election;
    }

    synchronized View judge(BlobProperties props, long now) {
      deletedAt = null;
      long term = term(election, props);
      highestToken = Math.max(highestToken, term);
      Duration ttl = leaseDuration(props);
      Optional<String> holder = holder(props);
      if (isLeased(props)) {
        if (props.getLeaseDuration() == LeaseDurationType.INFINITE
            || props.getETag().equals(vanishedEtag)) {
          lastHeld = null;
          return new View(State.HELD, record(NOT_BATONS, term, ttl, Optional.empty()));
        }
        if (holder.isEmpty()) {
          return new View(State.UNRECORDED, record(UNRECORDED_HOLDER, term, ttl, Optional.empty()));
        }
        vanishedEtag = null;
        lastHeld = record(holder.get(), term, ttl, Optional.empty());
        return new View(State.HELD, lastHeld);
      }
      if (holder.isEmpty() || props.getLeaseState() == LeaseStateType.EXPIRED) {
        vanishedEtag = null;
        lastHeld = null;
        return new View(State.FREE, null);
      }
      // Broken (or breaking), or released by a client that had the lease id: not by its holder.
      if (!props.getETag().equals(vanishedEtag)) {
        vanishedEtag = props.getETag();
        vanishedAt = now;
      }
      long remaining = vanishedAt + ttl.toNanos() - now;
      if (remaining <= 0 && props.getLeaseState() == LeaseStateType.BREAKING) {
        // Waited out, but a break period longer than the lease still locks it: nobody can take it.
        return new View(State.HELD, record(holder.get(), term, ttl, Optional.empty()));
      }
      if (remaining <= 0) {
        lastHeld = null;
        return new View(State.FREE, null);
      }
      lastHeld = record(holder.get(), term, ttl, Optional.empty());
      return new View(
          State.VANISHED,
          record(holder.get(), term, ttl, Optional.of(Duration.ofNanos(remaining))));
    }

    /**
     * The holder of a blob that is gone while its lease may still be running for its holder:
     * counted from when this process first saw it gone. Empty when this process saw nobody hold it,
     * or that lease has passed.
     */
    synchronized Optional<LeaseRecord> deleted(long now) {
      vanishedEtag = null;
      if (lastHeld == null) {
        return Optional.empty();
      }
      if (deletedAt == null) {
        deletedAt = now;
      }
      long remaining = deletedAt + lastHeld.ttl().toNanos() - now;
      if (remaining <= 0) {
        lastHeld = null;
        return Optional.empty();
      }
      return Optional.of(
          record(
              lastHeld.holder(),
              lastHeld.token().value(),
              lastHeld.ttl(),
              Optional.of(Duration.ofNanos(remaining))));
    }

    /**
     * The next grant's token: past the blob's term and any this process saw, and at least the
     * second of Azure's clock of the read it started from times {@link #TOKENS_PER_SECOND}, which
     * keeps tokens rising when the blob is deleted and created again.
     */
    synchronized long nextToken(long term, long serverSecond) {
      return Math.max(
          Math.max(term, highestToken) + 1, Math.multiplyExact(serverSecond, TOKENS_PER_SECOND));
    }

    synchronized void granted(long token) {
      highestToken = Math.max(highestToken, token);
      vanishedEtag = null;
      lastHeld = null;
    }

    private LeaseRecord record(
        String holder, long term, Duration ttl, Optional<Duration> expiresIn) {
      return new LeaseRecord(
          election, holder, FencingToken.of(term), ttl, Optional.empty(), expiresIn);
    }
  }

  /** The lease duration the grant wrote, Azure's shortest when it wrote none. */
  private static Duration leaseDuration(BlobProperties props) {
    String seconds = props.getMetadata() == null ? null : props.getMetadata().get(LEASE_SECONDS);
    return seconds != null && seconds.matches("\\d{1,4}")
        ? Duration.ofSeconds(Long.parseLong(seconds))
        : MIN_LEASE;
  }

  private static String withoutQuery(String url) {
    int q = url.indexOf('?');
    return q < 0 ? url : url.substring(0, q);
  }

  // ---------------------------------------------------------------- handles

  private static String handle(long confirmedAt, String leaseId, String etag) {
    return confirmedAt + " " + leaseId + " " + etag;
  }

  /**
   * What a lease's handle holds: when (this store's monotonic clock) the last grant or renewal of
   * the term started, from which the lease surely lasts its TTL; the term's lease id; and the
   * blob's ETag after this term's grant.
   */
  private record Handle(long confirmedAt, String leaseId, String etag) {
    static Handle parse(String handle) {
      String[] parts = handle.split(" ", 3);
      if (parts.length < 3) {
        throw new IllegalArgumentException(
            "not a lease of an Azure Blob store: a handle of 3 parts, but it has " + parts.length);
      }
      try {
        return new Handle(Long.parseLong(parts[0]), parts[1], parts[2]);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "not a lease of an Azure Blob store: its handle does not start with a time", e);
      }
    }
  }

  /** Settings of an {@link AzureBlobLeaseStore}, checked when set. */
  public static final class Builder {
    private final BlobContainerClient container;
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private MonotonicClock clock = MonotonicClock.system();
    private boolean createContainer;

    private Builder(BlobContainerClient container) {
      this.container = container;
    }

    /**
     * The longest any one store call may take before it fails with a LeaseStoreException (default 3
     * s): at most half the renew deadline it is used with ({@link CallTimeout}).
     */
    public Builder callTimeout(Duration callTimeout) {
      this.callTimeout = CallTimeout.check("callTimeout", callTimeout);
      return this;
    }

    /**
     * Whether {@link #build()} creates the container when it does not exist; off by default, so the
     * store needs no permission on the account beyond its container's blobs.
     */
    public Builder createContainer(boolean createContainer) {
      this.createContainer = createContainer;
      return this;
    }

    /** The clock that tells when a lease ran out for its holder; the system's by default. */
    public Builder clock(MonotonicClock clock) {
      this.clock = requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the store; with {@link #createContainer} on, creates the container first if it is
     * missing.
     */
    public AzureBlobLeaseStore build() {
      AzureBlobLeaseStore store = new AzureBlobLeaseStore(this);
      if (createContainer) {
        store.createContainer();
      }
      return store;
    }
  }

  private void createContainer() {
    String what = "creating container " + container.getBlobContainerName() + " at " + where;
    try {
      container.createIfNotExistsWithResponse(null, callTimeout, Context.NONE);
    } catch (BlobStorageException e) {
      throw new LeaseStoreException(
          null,
          what
              + " failed: HTTP "
              + e.getStatusCode()
              + code(e)
              + (e.getStatusCode() == 403
                  ? " (create-container needs a right on the account; or create the container once"
                      + " by hand)"
                  : ""),
          SdkFailure.of(e));
    } catch (RuntimeException e) {
      SdkFailure cause = SdkFailure.of(e);
      throw new LeaseStoreException(
          null,
          what + " failed within the call timeout " + callTimeout.toMillis() + " ms: " + cause,
          cause);
    }
  }
}
