package dev.baton.benchmarks;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Connections straight from the JDBC driver, placed under the pool, that count the round trips a
 * client makes to the database: every statement execution, commit, rollback and validity check
 * (including those the pool makes itself). Counting happens at the driver boundary, so it sees the
 * same requests whatever library sits on top.
 */
final class CountingDataSource implements DataSource {

  private static final Set<String> ROUND_TRIPS_ON_STATEMENT =
      Set.of(
          "execute",
          "executeQuery",
          "executeUpdate",
          "executeLargeUpdate",
          "executeBatch",
          "executeLargeBatch");
  private static final Set<String> ROUND_TRIPS_ON_CONNECTION =
      Set.of("commit", "rollback", "isValid");

  private final String url;
  private final Properties credentials = new Properties();
  private final AtomicLong roundTrips = new AtomicLong();
  private volatile int loginTimeoutSeconds;

  CountingDataSource(String url, String user, String password) {
    this.url = url;
    credentials.setProperty("user", user);
    credentials.setProperty("password", password);
  }

  long roundTrips() {
    return roundTrips.get();
  }

  @Override
  public Connection getConnection() throws SQLException {
    Connection real = DriverManager.getConnection(url, credentials);
    return (Connection)
        Proxy.newProxyInstance(
            CountingDataSource.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            new Counting(real, ROUND_TRIPS_ON_CONNECTION));
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException(
        "credentials are fixed when the data source is built");
  }

  /** Forwards every call; counts the ones that reach the server; wraps the statements it makes. */
  private final class Counting implements InvocationHandler {
    private final Object target;
    private final Set<String> counted;

    Counting(Object target, Set<String> counted) {
      this.target = target;
      this.counted = counted;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      if (counted.contains(method.getName())) {
        roundTrips.incrementAndGet();
      }
      Object result;
      try {
        result = method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      if (result instanceof Statement
          && method.getReturnType().isInterface()
          && Statement.class.isAssignableFrom(method.getReturnType())) {
        return Proxy.newProxyInstance(
            CountingDataSource.class.getClassLoader(),
            new Class<?>[] {method.getReturnType()},
            new Counting(result, ROUND_TRIPS_ON_STATEMENT));
      }
      return result;
    }
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {}

  @Override
  public void setLoginTimeout(int seconds) {
    loginTimeoutSeconds = seconds;
  }

  @Override
  public int getLoginTimeout() {
    return loginTimeoutSeconds;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("no java.util.logging here");
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("not a wrapper of " + iface.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }
}
