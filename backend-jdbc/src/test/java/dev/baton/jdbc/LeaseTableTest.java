package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class LeaseTableTest {

  @ParameterizedTest
  @EnumSource(Dialect.class)
  void everyDatabaseShipsItsDdlFileWithTheDefaultTable(Dialect dialect) {
    String ddl = LeaseTable.ddlFileText(dialect);

    assertThat(ddl).contains("CREATE TABLE IF NOT EXISTS baton_lease (");
    assertThat(ddl)
        .contains(
            "election", "holder", "term", "ttl_millis", "acquired_at", "renewed_at", "expires_at");
    assertThat(LeaseTable.ddlResourcePath(dialect))
        .isEqualTo("dev/baton/jdbc/" + dialect.ddlFile());
  }

  @Test
  void theStatementTheStoreRunsIsTheDdlFileForItsOwnTableName() {
    LeaseTable table = new LeaseTable(Optional.of("app"), "leases");

    String statement = table.createStatement(Dialect.POSTGRESQL);

    assertThat(statement)
        .startsWith("CREATE TABLE IF NOT EXISTS app.leases (")
        .doesNotContain("baton_lease", "--")
        .doesNotEndWith(";");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "1lease",
        "lease-table",
        "lease table",
        "x;drop table y",
        "a234567890123456789012345678901234567890123456789012345678901234"
      })
  void refusesNamesThatAreNotPlainIdentifiers(String name) {
    assertThatThrownBy(() -> new LeaseTable(Optional.empty(), name))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("table")
        .hasMessageContaining("'" + name + "'")
        .hasMessageContaining("letters, digits and underscores");
  }

  @Test
  void theNotifyChannelFitsPostgresqlsLimitAndDependsOnTheTable() {
    String longName = "t".repeat(63);

    assertThat(new LeaseTable(Optional.empty(), "baton_lease").channel())
        .isEqualTo("baton_baton_lease");
    assertThat(new LeaseTable(Optional.of("s".repeat(63)), longName).channel())
        .hasSizeLessThanOrEqualTo(63);
    assertThat(new LeaseTable(Optional.of("a"), longName).channel())
        .isNotEqualTo(new LeaseTable(Optional.of("b"), longName).channel());
  }
}
