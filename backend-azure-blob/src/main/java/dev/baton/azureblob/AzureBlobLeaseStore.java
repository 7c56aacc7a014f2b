package dev.baton.azureblob;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.RequestConditions;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobErrorCode;
import com.azure.storage.blob.models.BlobProperties;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
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
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

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
 * token is a counter in the blob's metadata, raised by an ETag-conditional write on every grant.
 * Azure cannot watch a blob, so followers poll at the retry period.
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

  /** What a follower shows while a grant is between its lease and its metadata write. */
  static final String UNRECORDED_HOLDER = "(a candidate whose grant is in progress)";

  private final BlobContainerClient container;
  private final Duration callTimeout;
  private final MonotonicClock clock;
  private final String where;

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
    BlobLeaseClient lease = leaseOf(blob, candidate);
    LeaseRecord seen = null;
    for (int attempt = 0; attempt < ATTEMPTS_BEFORE_ANSWERING; attempt++) {
      if (attempt > 0 && !pausedBeforeReadingAgain(deadline)) {
        break;
      }
      Optional<BlobProperties> read = properties(election, blob, deadline);
      if (read.isEmpty()) {
        create(election, blob, deadline);
        continue;
      }
      BlobProperties props = read.get();
      Optional<String> holder = holder(props);
      if (isLeased(props)) {
        seen = record(election, props, holder.orElse(UNRECORDED_HOLDER));
        if (holder.isEmpty()) {
          continue; // leased, and its holder not yet written: read again, so the answer names the
          // holder
        }
        // Also when the holder is this candidate id (Azure would let the same lease id acquire
        // again): a live lease is never granted again.
        return Acquisition.held(seen);
      }
      String etag = props.getETag();
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
          continue; // another candidate leased or wrote it since the read: read again, then answer
        }
        throw failure(election, "acquire the lease of", e);
      }
      long term = term(election, props) + 1;
      Map<String, String> metadata = metadata(candidate, term, seconds);
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
                            new BlobRequestConditions()
                                .setLeaseId(lease.getLeaseId())
                                .setIfMatch(etag),
                            t,
                            Context.NONE))
                .getHeaders()
                .getValue(HttpHeaderName.ETAG);
      } catch (BlobStorageException e) {
        if (isContention(e)) {
          continue; // our new lease is gone already (a very slow call): start over
        }
        throw failure(election, "raise the term of", e);
      }
      Lease grant =
          new Lease(
              election,
              candidate,
              FencingToken.of(term),
              Duration.ofSeconds(seconds),
              handle(granted, started));
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
   * Waits a moment before reading the blob again after a race (another grant between its lease and
   * its metadata write takes one round trip); false when the call timeout leaves no time for it.
   */
  private boolean pausedBeforeReadingAgain(long deadline) {
    if (deadline - clock.nanoTime() < 2 * RACE_PAUSE.toNanos()) {
      return false;
    }
    LockSupport.parkNanos(RACE_PAUSE.toNanos());
    return !Thread.currentThread().isInterrupted();
  }

  /**
   * Renews the blob's lease only while the blob is unchanged since this term's grant (If-Match on
   * its ETag: every grant and release rewrites the metadata) and only while the lease has not run
   * out by this store's own clock. Azure renews an expired lease nobody took since, and Azurite
   * renews an expired lease even after the blob changed (Azurite issue 2352); neither may revive a
   * term its elector has given up for lost.
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
              leaseOf(blob, lease.candidate())
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
    return lease.renewed(lease.ttl(), handle(handle.etag(), started));
  }

  /**
   * Marks the blob released (no holder, same term) and breaks nothing else: both writes carry this
   * term's ETag, so a lease granted since, also to the same candidate, stays as it is.
   */
  @Override
  public void release(Lease lease) {
    requireNonNull(lease, "lease");
    String election = lease.election();
    long deadline = clock.nanoTime() + callTimeout.toNanos();
    Handle handle = Handle.parse(lease.handle());
    BlobClient blob = container.getBlobClient(election);
    BlobLeaseClient leaseClient = leaseOf(blob, lease.candidate());
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
                              .setLeaseId(leaseClient.getLeaseId())
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
      throw failure(election, "release the lease of", e);
    }
  }

  @Override
  public Optional<LeaseRecord> read(String election) {
    checkElectionName(election);
    BlobClient blob = container.getBlobClient(election);
    long deadline = clock.nanoTime() + callTimeout.toNanos();
    Optional<BlobProperties> read =
        properties(election, blob, deadline).filter(AzureBlobLeaseStore::isLeased);
    // Leased, and its holder not yet written (a grant between its two requests): read again.
    for (int attempt = 1;
        attempt < ATTEMPTS_BEFORE_ANSWERING
            && read.flatMap(AzureBlobLeaseStore::holder).isEmpty()
            && read.isPresent()
            && pausedBeforeReadingAgain(deadline);
        attempt++) {
      read = properties(election, blob, deadline).filter(AzureBlobLeaseStore::isLeased);
    }
    return read.map(p -> record(election, p, holder(p).orElse(UNRECORDED_HOLDER)));
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

  private Optional<BlobProperties> properties(String election, BlobClient blob, long deadline) {
    try {
      return Optional.of(
          call(
                  election,
                  "read",
                  deadline,
                  t -> blob.getPropertiesWithResponse(null, t, Context.NONE))
              .getValue());
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
      if (Thread.currentThread().isInterrupted()) {
        throw new LeaseStoreException(
            election, what + " blob '" + election + "' in " + where + ": interrupted", e);
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
              + e,
          e);
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
    // The service's message only: the exception's own text repeats the request URL, which may carry
    // a SAS token.
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
        e);
  }

  /** Azure's error code, when the answer had one (a HEAD request's has none). */
  private static String code(BlobStorageException e) {
    return e.getErrorCode() == null ? "" : " " + e.getErrorCode();
  }

  // ---------------------------------------------------------------- the blob's contents

  /**
   * The lease id of {@code candidate}: derived from its id, so that any store of the candidate can
   * release and renew its lease by the lease alone. The store never acquires a leased blob again,
   * not even under its own lease id: a live lease is never granted again.
   */
  private static BlobLeaseClient leaseOf(BlobClient blob, String candidate) {
    return new BlobLeaseClientBuilder().blobClient(blob).leaseId(leaseId(candidate)).buildClient();
  }

  static String leaseId(String candidate) {
    return UUID.nameUUIDFromBytes(("baton-candidate:" + candidate).getBytes(UTF_8)).toString();
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

  private LeaseRecord record(String election, BlobProperties props, String holder) {
    String seconds = props.getMetadata() == null ? null : props.getMetadata().get(LEASE_SECONDS);
    Duration ttl =
        seconds != null && seconds.matches("\\d{1,4}")
            ? Duration.ofSeconds(Long.parseLong(seconds))
            : MIN_LEASE;
    return new LeaseRecord(
        election,
        holder,
        FencingToken.of(term(election, props)),
        ttl,
        Optional.empty(),
        Optional.empty());
  }

  private static String withoutQuery(String url) {
    int q = url.indexOf('?');
    return q < 0 ? url : url.substring(0, q);
  }

  // ---------------------------------------------------------------- handles

  private static String handle(String etag, long confirmedAt) {
    return confirmedAt + " " + etag;
  }

  /**
   * What a lease's handle holds: the blob's ETag after this term's grant, and when (this store's
   * monotonic clock) the last grant or renewal of the term started, from which the lease surely
   * lasts its TTL.
   */
  private record Handle(String etag, long confirmedAt) {
    static Handle parse(String handle) {
      int space = handle.indexOf(' ');
      if (space < 0) {
        throw new IllegalArgumentException(
            "not a lease of an Azure Blob store: handle '" + handle + "'");
      }
      return new Handle(handle.substring(space + 1), Long.parseLong(handle.substring(0, space)));
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
          e);
    } catch (RuntimeException e) {
      throw new LeaseStoreException(
          null,
          what + " failed within the call timeout " + callTimeout.toMillis() + " ms: " + e,
          e);
    }
  }
}
