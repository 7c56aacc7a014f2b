package dev.baton.testservers;

import static org.awaitility.Awaitility.await;

import dev.baton.conformance.FreezableServer;
import dev.baton.conformance.RequiredServer;
import dev.baton.conformance.ServerPorts;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntFunction;

/**
 * A PostgreSQL or MariaDB server with a database {@code test} that user {@link #user()} reaches
 * without a password. In {@link ServerMode#LOCAL} it is the machine's own (127.0.0.1:5432 and
 * :3306); in {@link ServerMode#CONTAINERS} a container of the image {@value #POSTGRES_IMAGE} or
 * {@value #MARIADB_IMAGE} names (the official {@code postgres} and {@code mariadb} images work, as
 * do the ones {@code scripts/docker-engine} builds), which can also be killed and started again on
 * the same address, and frozen. The test's classpath brings the JDBC driver.
 */
public final class JdbcServer implements FreezableServer, AutoCloseable {

  /** The PostgreSQL image of the container mode. */
  public static final String POSTGRES_IMAGE = "baton.image.postgres";

  /** The MariaDB image of the container mode. */
  public static final String MARIADB_IMAGE = "baton.image.mariadb";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private final String name;
  private final String scheme;
  private final String user;
  private final InetSocketAddress address;
  private final Optional<ServerContainer> container;

  private JdbcServer(
      String name, String scheme, String user, int port, Optional<ServerContainer> container) {
    this.name = name;
    this.scheme = scheme;
    this.user = user;
    this.address = new InetSocketAddress("127.0.0.1", port);
    this.container = container;
  }

  /** PostgreSQL: user postgres, database test. */
  public static JdbcServer postgres() {
    if (!ServerMode.containers()) {
      RequiredServer.requireTcp(
          "PostgreSQL",
          "127.0.0.1",
          5432,
          "sudo service postgresql start (user postgres with trust, database test)");
      return new JdbcServer("PostgreSQL", "postgresql", "postgres", 5432, Optional.empty());
    }
    return inContainer(
        "PostgreSQL",
        "postgresql",
        "postgres",
        ServerContainer.image(POSTGRES_IMAGE, "local/baton-postgres:15"),
        Map.of("POSTGRES_HOST_AUTH_METHOD", "trust", "POSTGRES_DB", "test"),
        port -> List.of("postgres", "-c", "listen_addresses=127.0.0.1", "-c", "port=" + port));
  }

  /** MariaDB: user root with an empty password, database test. */
  public static JdbcServer mariadb() {
    if (!ServerMode.containers()) {
      RequiredServer.requireTcp(
          "MariaDB",
          "127.0.0.1",
          3306,
          "sudo service mariadb start (user root, empty password, database test)");
      return new JdbcServer("MariaDB", "mariadb", "root", 3306, Optional.empty());
    }
    return inContainer(
        "MariaDB",
        "mariadb",
        "root",
        ServerContainer.image(MARIADB_IMAGE, "local/baton-mariadb:10.11"),
        Map.of("MARIADB_ALLOW_EMPTY_ROOT_PASSWORD", "1", "MARIADB_DATABASE", "test"),
        port -> List.of("mariadbd", "--bind-address=127.0.0.1", "--port=" + port));
  }

  /**
   * Starts {@code image} with the command that makes the server listen on a port of the fixture's.
   */
  private static JdbcServer inContainer(
      String name,
      String scheme,
      String user,
      String image,
      Map<String, String> env,
      IntFunction<List<String>> command) {
    int port = ServerPorts.belowEphemeralRange();
    ServerContainer c = ServerContainer.start(name, image, env, command.apply(port));
    return new JdbcServer(name, scheme, user, port, Optional.of(c)).awaitAnswer();
  }

  public InetSocketAddress address() {
    return address;
  }

  public String user() {
    return user;
  }

  /**
   * The JDBC URL of database test at {@code through}: a proxy in front of this server, or {@link
   * #address()}.
   */
  public String url(InetSocketAddress through) {
    return "jdbc:" + scheme + "://127.0.0.1:" + through.getPort() + "/test";
  }

  public String url() {
    return url(address);
  }

  /**
   * The image of the container the server runs in, as the engine reports it; empty for the
   * machine's own.
   */
  public Optional<String> image() {
    return container.map(ServerContainer::image);
  }

  /** Whether this fixture runs the server itself, and so can kill, restart and pause it. */
  public boolean inContainer() {
    return container.isPresent();
  }

  /**
   * Kills the database (SIGKILL); {@link #restart()} starts it again on the same address with its
   * data.
   */
  public void kill() {
    running().kill();
  }

  /** Starts the killed database again and waits until it answers. */
  public void restart() {
    running().restart();
    awaitAnswer();
  }

  /**
   * Freezes the database ({@code docker pause}): its connections stay open and nothing answers
   * until {@link #thaw()}.
   */
  @Override
  public void freeze() {
    running().pause();
  }

  @Override
  public void thaw() {
    running().unpause();
  }

  private ServerContainer running() {
    return container.orElseThrow(
        () ->
            new IllegalStateException(
                name
                    + " is the machine's own; only "
                    + ServerMode.PROPERTY
                    + "=containers can stop it"));
  }

  private JdbcServer awaitAnswer() {
    try {
      await(name + " at " + address + " answers")
          .atMost(START_TIMEOUT)
          .pollInterval(Duration.ofMillis(200))
          .ignoreExceptionsInstanceOf(SQLException.class)
          .until(this::answers);
      return this;
    } catch (RuntimeException | Error e) {
      String logs = container.map(ServerContainer::logs).orElse("");
      close();
      throw new IllegalStateException(
          name + " at " + address + " does not answer; its output:\n" + logs, e);
    }
  }

  private boolean answers() throws SQLException {
    try (Connection c = DriverManager.getConnection(url(), user, "");
        Statement s = c.createStatement()) {
      return s.execute("select 1");
    }
  }

  /** Removes the container, if this fixture started one; the machine's own server keeps running. */
  @Override
  public void close() {
    container.ifPresent(ServerContainer::close);
  }

  @Override
  public String toString() {
    return name + " at " + address + container.map(c -> " in " + c).orElse("");
  }
}
