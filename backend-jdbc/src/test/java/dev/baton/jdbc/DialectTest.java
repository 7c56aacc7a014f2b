package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.baton.election.ConfigurationException;
import java.lang.reflect.Proxy;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DialectTest {

  /** Metadata as a driver reports it; the version numbers are the driver's own reading. */
  private static DatabaseMetaData metaData(String product, String version, int major, int minor) {
    return (DatabaseMetaData)
        Proxy.newProxyInstance(
            DialectTest.class.getClassLoader(),
            new Class<?>[] {DatabaseMetaData.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "getDatabaseProductName" -> product;
                  case "getDatabaseProductVersion" -> version;
                  case "getDatabaseMajorVersion" -> major;
                  case "getDatabaseMinorVersion" -> minor;
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }

  @ParameterizedTest
  @CsvSource({
    "PostgreSQL, 15.20 (Debian 15.20-0+deb12u1), 15, 20, POSTGRESQL",
    "MariaDB, 10.11.19-MariaDB-0+deb12u1, 10, 11, MARIADB",
    "MariaDB, 10.6.2-MariaDB, 10, 6, MARIADB",
    "MariaDB, 11.4.2-MariaDB, 11, 4, MARIADB",
    "MySQL, 5.5.5-10.11.19-MariaDB-0+deb12u1, 5, 5, MARIADB",
    "MySQL, 8.0.36, 8, 0, MYSQL",
    "H2, 2.5.252 (2026-09-23), 2, 5, H2"
  })
  void findsTheDatabaseFromTheDriversMetadata(
      String product, String version, int major, int minor, Dialect expected) throws SQLException {
    assertThat(Dialect.of(metaData(product, version, major, minor))).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({"MariaDB, 10.5.29-MariaDB, 10, 5", "MySQL, 5.5.5-10.3.39-MariaDB, 5, 5"})
  void refusesAMariaDbOlderThanTenSixNamingTheVersion(
      String product, String version, int major, int minor) {
    assertThatThrownBy(() -> Dialect.of(metaData(product, version, major, minor)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("MariaDB 10.6 or later")
        .hasMessageContaining(version);
  }

  @Test
  void refusesAMySqlOlderThanEightNamingTheVersion() {
    assertThatThrownBy(() -> Dialect.of(metaData("MySQL", "5.7.44", 5, 7)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("MySQL 8.0 or later")
        .hasMessageContaining("5.7.44");
  }

  @ParameterizedTest
  @CsvSource({"Oracle, 19c, 19, 0", "Microsoft SQL Server, 16.0, 16, 0"})
  void refusesAnotherDatabaseNamingWhatIsSupported(
      String product, String version, int major, int minor) {
    assertThatThrownBy(() -> Dialect.of(metaData(product, version, major, minor)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(product)
        .hasMessageContaining("PostgreSQL, MariaDB 10.6+, MySQL 8.0+ and H2");
  }
}
