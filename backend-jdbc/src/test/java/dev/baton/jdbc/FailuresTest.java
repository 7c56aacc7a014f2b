package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.jdbc.Failures.Kind;
import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.stream.Stream;
import org.h2.jdbc.JdbcSQLNonTransientException;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The classification behind the first words of a store error, for the codes the integration tests
 * cannot all provoke on the servers here (MariaDB's column and database refusals, a cancelled
 * statement). The integration tests provoke the common ones on the real databases.
 */
class FailuresTest {

  static Stream<Arguments> failures() {
    return Stream.of(
        Arguments.of(
            "PostgreSQL: connection refused",
            new SQLException("Connection to 127.0.0.1:1 refused", "08001"),
            Kind.UNREACHABLE),
        Arguments.of(
            "a refused connect under jOOQ's wrapper",
            new DataAccessException("acquire", new ConnectException("Connection refused")),
            Kind.UNREACHABLE),
        Arguments.of(
            "PostgreSQL: unknown role",
            new SQLException("FATAL: role \"x\" does not exist", "28000"),
            Kind.CREDENTIALS),
        Arguments.of(
            "PostgreSQL: wrong password",
            new SQLException("FATAL: password authentication failed", "28P01"),
            Kind.CREDENTIALS),
        Arguments.of(
            "MariaDB: access denied for user",
            new SQLException("Access denied for user 'x'@'h'", "28000", 1045),
            Kind.CREDENTIALS),
        Arguments.of(
            "the pool's timeout over a refused login",
            new SQLTransientConnectionException(
                "timed out", "28000", new SQLException("role", "28000")),
            Kind.CREDENTIALS),
        Arguments.of(
            "PostgreSQL: permission denied",
            new SQLException("permission denied for table baton_lease", "42501"),
            Kind.PERMISSION),
        Arguments.of(
            "MariaDB: database denied",
            new SQLSyntaxErrorException(
                "Access denied for user 'x' to database 'test'", "42000", 1044),
            Kind.PERMISSION),
        Arguments.of(
            "MariaDB: table denied",
            new SQLSyntaxErrorException("INSERT command denied", "42000", 1142),
            Kind.PERMISSION),
        Arguments.of(
            "MariaDB: column denied",
            new SQLSyntaxErrorException("SELECT command denied for column", "42000", 1143),
            Kind.PERMISSION),
        Arguments.of(
            "H2: not enough rights",
            new JdbcSQLNonTransientException("Not enough rights", null, "90096", 90096, null, null),
            Kind.PERMISSION),
        Arguments.of(
            "H2: connection broken",
            new JdbcSQLNonTransientException(
                "Connection is broken", null, "90067", 90067, null, null),
            Kind.UNREACHABLE),
        Arguments.of(
            "PostgreSQL: missing table",
            new SQLException("relation \"x\" does not exist", "42P01"),
            Kind.MISSING_TABLE),
        Arguments.of(
            "MariaDB: missing table",
            new SQLSyntaxErrorException("Table 'test.x' doesn't exist", "42S02", 1146),
            Kind.MISSING_TABLE),
        Arguments.of(
            "PostgreSQL: statement cancelled",
            new SQLException("canceling statement due to statement timeout", "57014"),
            Kind.TIMEOUT),
        Arguments.of(
            "a read timeout", new SQLTimeoutException("the call timeout passed"), Kind.TIMEOUT),
        Arguments.of(
            "the pool's own timeout, nothing failed yet",
            new SQLTransientConnectionException("Connection is not available"),
            Kind.NO_CONNECTION),
        Arguments.of(
            "MariaDB: a syntax error",
            new SQLSyntaxErrorException("You have an error in your SQL syntax", "42000", 1064),
            Kind.OTHER));
  }

  @ParameterizedTest(name = "{0}: {2}")
  @MethodSource("failures")
  void failuresAreToldApart(String what, Throwable failure, Kind expected) {
    assertThat(Failures.kind(failure)).isEqualTo(expected);
  }
}
