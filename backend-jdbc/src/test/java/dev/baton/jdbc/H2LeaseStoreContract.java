package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.election.Acquisition;
import dev.baton.election.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * What both H2 modes share: the embedded engine, its admin user and its SQL for users and schemas.
 */
abstract class H2LeaseStoreContract extends JdbcLeaseStoreContract
    implements LongGuardedWriteContract {

  /**
   * On H2 an acquire that a live lease refuses takes no lock on the lease's row, so it does not
   * wait for the transaction that holds it: here a guarded write, elsewhere another candidate's
   * attempt. Before, every attempt locked the row first (the MERGE that makes sure it exists) and
   * so waited: six threads hammering one lease on a busy machine queued behind each other's
   * transactions past their call timeouts, 21 grants in 21 s where the same load now sees 150 in 5
   * s. This call would time out (1 s) behind the write that holds the row for 10 s.
   */
  @Test
  void anAcquireThatALiveLeaseRefusesWaitsForNoLockOnItsRow() throws Exception {
    JdbcLeaseStore store = leader();
    JdbcLeaseStore other = leaderWithCallTimeout(Duration.ofSeconds(1));
    Lease lease = grant(store, election("refused-unlocked"), "node-a", TTL);
    try (RowHeldByAGuardedWrite held =
        RowHeldByAGuardedWrite.start(store, lease, Duration.ofSeconds(10))) {
      Acquisition refused = other.tryAcquire(lease.election(), "node-b", TTL);

      assertThat(refused.isGranted()).as("granted while node-a's lease lives").isFalse();
      assertThat(refused.holder().orElseThrow().holder()).isEqualTo("node-a");
      assertThat(held.stillHeld()).as("the guarded write still held the row").isTrue();
      assertThat(held.finish()).isEqualTo("written");
    }
  }

  @Override
  void requireServer() {
    // embedded: always there
  }

  @Override
  String user() {
    return "sa";
  }

  @Override
  String password() {
    return "";
  }

  @Override
  String displayName() {
    return "H2";
  }

  @Override
  Properties badCredentials(String password) {
    Properties p = new Properties();
    p.setProperty(JdbcLeaseStoreProvider.URL, url());
    p.setProperty(JdbcLeaseStoreProvider.USERNAME, user());
    p.setProperty(JdbcLeaseStoreProvider.PASSWORD, password);
    return p;
  }

  @Override
  List<String> createUserSql(String user, String password, Optional<String> existingTable) {
    List<String> sql =
        new ArrayList<>(List.of("create user " + user + " password '" + password + "'"));
    existingTable.ifPresent(t -> sql.add("grant select, insert, update on " + t + " to " + user));
    return sql;
  }

  @Override
  List<String> dropUserSql(String user) {
    return List.of("drop user if exists " + user);
  }

  @Override
  String createSchemaSql(String schema) {
    return "create schema " + schema;
  }

  @Override
  String dropSchemaSql(String schema) {
    return "drop schema if exists " + schema + " cascade";
  }
}
