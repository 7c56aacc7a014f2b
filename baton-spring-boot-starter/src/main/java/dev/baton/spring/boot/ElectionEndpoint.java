package dev.baton.spring.boot;

import dev.baton.election.Elector;
import dev.baton.election.LeaseStore;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code /actuator/election}: who leads (read), and a step-down (write: {@code POST}). Read-only
 * unless {@code management.endpoint.election.access=unrestricted}; like every endpoint it is
 * reachable over HTTP only once exposed ({@code management.endpoints.web.exposure.include}).
 */
@Endpoint(id = "election", defaultAccess = Access.READ_ONLY)
public final class ElectionEndpoint {

  private final Elector elector;
  private final LeaseStore store;
  private final ElectionStatus status;

  ElectionEndpoint(Elector elector, LeaseStore store, ElectionStatus status) {
    this.elector = elector;
    this.store = store;
    this.status = status;
  }

  @ReadOperation
  public Map<String, Object> election() {
    return status.describe(elector, store);
  }

  /**
   * Gives leadership up (another instance takes it at once); this instance campaigns again later.
   */
  @WriteOperation
  public Map<String, Object> stepDown() {
    boolean wasLeading = elector.isLeader();
    elector.stepDown();
    return Map.of("steppedDown", wasLeading, "candidate", elector.candidate());
  }
}
