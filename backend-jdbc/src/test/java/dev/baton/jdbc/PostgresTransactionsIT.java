package dev.baton.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.baton.conformance.RequiredServer;
import dev.baton.election.MonotonicClock;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jooq.impl.DataSourceConnectionProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A call whose answer was complete when its deadline alarm aborted the connection: on a busy
 * machine the alarm can go off between the last answer and the end of the call. The answer stands;
 * only the connection is lost, and the pool drops it. (A transaction's last answer is its commit,
 * which a task cannot wait behind; the same code ends both kinds of call.)
 */
class PostgresTransactionsIT {

  private HikariDataSource pool;
  private Transactions transactions;

  @BeforeEach
  void openPool() {
    RequiredServer.requireTcp(
        "PostgreSQL",
        "127.0.0.1",
        5432,
        "sudo service postgresql start (user postgres with trust, database test)");
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
    c.setUsername("postgres");
    c.setMaximumPoolSize(1);
    pool = new HikariDataSource(c);
    transactions =
        new Transactions(new DataSourceConnectionProvider(pool), MonotonicClock.system());
  }

  @AfterEach
  void closePool() {
    if (pool != null) {
      pool.close();
    }
  }

  @Test
  void anAutoCommittedAnswerCompleteWhenTheAlarmAbortedTheConnectionIsReturned()
      throws SQLException {
    Integer answer =
        transactions.autoCommitted(deadlineIn(Duration.ofMillis(20)), c -> answerThenAborted(c));

    assertThat(answer).isEqualTo(42);
    assertThat(aFreshCallAnswers()).as("the pool dropped the aborted connection").isTrue();
  }

  /** Answers, then waits until the call's deadline alarm has aborted the connection. */
  private static int answerThenAborted(Connection c) throws SQLException {
    int answer;
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery("select 42")) {
      r.next();
      answer = r.getInt(1);
    }
    await("the deadline alarm aborts the connection")
        .atMost(Duration.ofSeconds(30))
        .until(() -> !c.isValid(1));
    return answer;
  }

  private boolean aFreshCallAnswers() throws SQLException {
    return transactions.autoCommitted(
        deadlineIn(Duration.ofSeconds(30)),
        c -> {
          try (Statement s = c.createStatement();
              ResultSet r = s.executeQuery("select 1")) {
            return r.next();
          }
        });
  }

  private static long deadlineIn(Duration d) {
    return System.nanoTime() + TimeUnit.NANOSECONDS.convert(d);
  }
}
