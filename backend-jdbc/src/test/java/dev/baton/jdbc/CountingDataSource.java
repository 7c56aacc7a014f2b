package dev.baton.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A pool seen through connections that count what a store sends: the statements it prepares and the
 * JDBC batches it runs. Tests build a store on it to tell one statement from a batch of them.
 */
final class CountingDataSource {

  private final DataSource counted;
  private final AtomicInteger prepared = new AtomicInteger();
  private final AtomicInteger batches = new AtomicInteger();

  CountingDataSource(DataSource pool) {
    this.counted =
        proxy(
            DataSource.class,
            pool,
            (m, result) ->
                m.getName().equals("getConnection") ? connection((Connection) result) : result);
  }

  /** The pool, counted; closing the store leaves it open as any caller's. */
  DataSource dataSource() {
    return counted;
  }

  int prepared() {
    return prepared.get();
  }

  int batches() {
    return batches.get();
  }

  void reset() {
    prepared.set(0);
    batches.set(0);
  }

  private Connection connection(Connection c) {
    return proxy(
        Connection.class,
        c,
        (m, result) -> {
          if (!m.getName().equals("prepareStatement")) {
            return result;
          }
          prepared.incrementAndGet();
          return proxy(PreparedStatement.class, (PreparedStatement) result, (sm, r) -> r);
        });
  }

  @FunctionalInterface
  private interface Wrapping {
    Object wrap(Method method, Object result);
  }

  private <T> T proxy(Class<T> type, T target, Wrapping wrapping) {
    Object p =
        Proxy.newProxyInstance(
            CountingDataSource.class.getClassLoader(),
            new Class<?>[] {type},
            (self, method, args) -> {
              if (method.getName().equals("executeBatch")) {
                batches.incrementAndGet();
              }
              try {
                return wrapping.wrap(method, method.invoke(target, args));
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
    return type.cast(p);
  }
}
