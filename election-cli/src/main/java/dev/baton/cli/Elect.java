package dev.baton.cli;

import dev.baton.election.ConfigurationException;
import dev.baton.election.LeaseStoreException;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * {@code elect}: run a command only while this process leads an election, show who leads, or watch
 * a demo. Exit status: that of the command for {@code run} (127 when it cannot be found or run); 0
 * when somebody leads and 1 when nobody does for {@code status}; 2 for bad arguments or
 * configuration (nothing was started); 3 when the backend could not be read.
 */
public final class Elect {

  /** Bad arguments or configuration; nothing was started. */
  static final int USAGE = 2;

  /** The backend did not answer. */
  static final int BACKEND_UNREACHABLE = 3;

  private Elect() {}

  public static void main(String[] args) {
    // H2's AUTO_SERVER (with election.jdbc.url=jdbc:h2:file:...;AUTO_SERVER=TRUE) serves the
    // database to the other elect processes; on loopback only.
    if (System.getProperty("h2.bindAddress") == null) {
      System.setProperty("h2.bindAddress", "127.0.0.1");
    }
    System.exit(execute(args, Path.of(""), System.out, System.err));
  }

  static int execute(String[] args, Path workingDirectory, PrintStream out, PrintStream err) {
    try {
      Arguments.Invocation invocation = Arguments.parse(args);
      if (invocation instanceof Arguments.Run run) {
        return RunCommand.run(run, workingDirectory);
      }
      if (invocation instanceof Arguments.Status status) {
        return StatusCommand.run(status, workingDirectory, out, err);
      }
      if (invocation instanceof Arguments.Demo) {
        return Demo.run(workingDirectory, out);
      }
      if (invocation instanceof Arguments.Version) {
        out.println(About.versionText());
        return 0;
      }
      out.println(Arguments.USAGE);
      out.println();
      out.println(HELP);
      out.println();
      out.println(About.backendsText());
      return 0;
    } catch (UsageException e) {
      err.println("elect: " + e.getMessage());
      if (e.status() == USAGE) {
        err.println(Arguments.USAGE);
      }
      return e.status();
    } catch (ConfigurationException e) {
      err.println("elect: configuration: " + e.getMessage());
      return USAGE;
    } catch (LeaseStoreException e) {
      err.println("elect: the backend did not answer: " + e.getMessage());
      return BACKEND_UNREACHABLE;
    }
  }

  private static final String HELP =
      String.join(
          "\n",
          "run      campaign in the election; while leader, run COMMAND with BATON_ELECTION, BATON_CANDIDATE and",
          "         BATON_FENCING_TOKEN in its environment. When leadership ends, COMMAND's process group gets",
          "         SIGTERM, then SIGKILL after --grace; elect campaigns again. When COMMAND exits, elect releases",
          "         and exits with its status (--restart: runs it again while leader). SIGTERM/SIGINT/SIGHUP: stops",
          "         COMMAND, releases, exits (under nohup a hangup changes nothing). If elect dies, COMMAND is killed",
          "         at once; if elect freezes or is stopped (Ctrl-Z), its guard stops COMMAND at the renew deadline",
          "         by itself, before another candidate can be elected.",
          "status   who leads, the fencing token, how long ago it renewed, the backend; --watch: every change;",
          "         --output json: the same once as one JSON object (its schema: docs/elect.md)",
          "demo     three candidates on the embedded default: election, crash failover, graceful handover",
          "--version  elect's version and the Java it runs on",
          "",
          "Configuration: --config FILE (properties), else system properties; ELECTION_* environment variables",
          "override either (ELECTION_JDBC_URL for election.jdbc.url). Without any backend settings: the",
          "embedded default, lease files under ./.baton/leases shared by every elect started in this directory.",
          "--name overrides election.name (default: 'default').",
          "",
          "Exit status: run: COMMAND's (127 if it is not found or cannot be run; nothing is started then);",
          "status: 0 leader, 1 none;",
          "2: bad arguments or configuration, nothing started; 3: the backend did not answer.");
}
