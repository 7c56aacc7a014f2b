package dev.baton.azureblob;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.CloseAtEnd;
import dev.baton.conformance.FrozenServerScenario;
import dev.baton.election.LeaseStore;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Azurite frozen (SIGSTOP: its sockets stay open and nothing answers) for longer than the lease
 * while three electors, each on its own client, run (issue 36, section 3). Azurite is the whole
 * store: the leader must step down by its renew deadline and nobody may be granted until the thaw;
 * then one elector leads again, none restarted, and the history check holds.
 */
class AzureBlobServerFrozenIT {

  private final CloseAtEnd closeAtEnd = new CloseAtEnd();

  @AfterEach
  void closeAll() throws Exception {
    closeAtEnd.close();
  }

  @Test
  void azuriteFrozenLongerThanTheLeaseCostsTheLeaderItsTermAndNothingElse() {
    Azurite azurite = Azurite.start();
    closeAtEnd.add(azurite);
    List<LeaseStore> stores = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      LeaseStore store =
          AzureBlobLeaseStore.builder(
                  Azurite.container(
                      azurite.address(), "baton-frozen", AzureBlobFixture.CALL_TIMEOUT))
              .callTimeout(AzureBlobFixture.CALL_TIMEOUT)
              .createContainer(true)
              .build();
      closeAtEnd.add(store);
      stores.add(store);
    }
    FrozenServerScenario scenario =
        new FrozenServerScenario("frozen-" + UUID.randomUUID(), AzureBlobFixture.TIMINGS, stores);
    closeAtEnd.add(scenario);

    FrozenServerScenario.Figures figures =
        scenario.freezeLongerThanTheLease(leader -> azurite.process(), true);

    assertThat(figures.keptTheTerm()).isFalse();
    // A request sent before the freeze and applied at the thaw (a renewal, the first write of the
    // leader's release) must not leave a lease that everyone waits out, though nobody leads under
    // it: the store that could not release it releases it at its next attempt.
    assertThat(figures.allAgreeAfterThaw())
        .as("ms from the thaw until all agree on one leader")
        .isLessThan(AzureBlobFixture.TIMINGS.leaseDuration().toMillis());
    System.out.println(
        "Azure Blob: Azurite frozen "
            + figures.frozenFor()
            + " ms: the leader stepped down "
            + figures.steppedDownAfterFreeze().orElseThrow()
            + " ms after the freeze; token "
            + figures.before()
            + " then "
            + figures.after()
            + ", all agree "
            + figures.allAgreeAfterThaw()
            + " ms after the thaw");
  }
}
