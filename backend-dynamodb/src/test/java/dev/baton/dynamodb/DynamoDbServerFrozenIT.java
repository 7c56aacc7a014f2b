package dev.baton.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.conformance.CloseAtEnd;
import dev.baton.conformance.FrozenServerScenario;
import dev.baton.conformance.Timings;
import dev.baton.election.LeaseStore;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Fault 2 of issue 16 on DynamoDB: dynalite frozen with SIGSTOP (its sockets open, nothing answers)
 * for longer than the lease while three electors, each on its own client, run. The one server is
 * the whole store: the leader must step down by its renew deadline and nobody may be granted until
 * the thaw; then one elector leads again, none restarted, and the history check holds.
 */
class DynamoDbServerFrozenIT {

  private static final Timings TIMINGS = Timings.SHORT;

  private final CloseAtEnd closeAtEnd = new CloseAtEnd();

  @AfterEach
  void closeAll() throws Exception {
    closeAtEnd.close();
  }

  @Test
  void dynaliteFrozenLongerThanTheLeaseCostsTheLeaderItsTermAndNothingElse() {
    Dynalite dynalite = closeAtEnd.add(Dynalite.start());
    List<LeaseStore> stores = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      var client =
          closeAtEnd.add(Dynalite.client(dynalite.address(), DynamoDbFixture.CALL_TIMEOUT));
      stores.add(
          closeAtEnd.add(
              DynamoDbLeaseStore.builder(client)
                  .table("baton-frozen")
                  .callTimeout(DynamoDbFixture.CALL_TIMEOUT)
                  .createTable(true)
                  .build()));
    }
    FrozenServerScenario scenario =
        closeAtEnd.add(new FrozenServerScenario("frozen-dynalite", TIMINGS, stores));

    FrozenServerScenario.Figures figures =
        scenario.freezeLongerThanTheLease(leader -> dynalite, true);

    assertThat(figures.keptTheTerm()).isFalse();
    System.out.println("DynamoDB frozen: " + figures);
  }
}
