package dev.baton.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CommandProcessTest {

  @Test
  void a_url_that_carries_a_password_is_not_passed_on_and_one_without_is() {
    Map<String, String> env =
        CommandProcess.commandEnvironment(
            Map.of(
                "ELECTION_JDBC_URL", "jdbc:postgresql://db/app?user=u&password=hunter2",
                "ELECTION_ETCD_ENDPOINTS", "http://root:pw@127.0.0.1:2379",
                "ELECTION_ZOOKEEPER_CONNECT_STRING", "127.0.0.1:2181"),
            Map.of());

    assertThat(env).doesNotContainKeys("ELECTION_JDBC_URL", "ELECTION_ETCD_ENDPOINTS").containsEntry("ELECTION_ZOOKEEPER_CONNECT_STRING", "127.0.0.1:2181");
    assertThat(env.toString()).doesNotContain("hunter2").doesNotContain("pw");
  }

  @Test
  void the_command_gets_elects_environment_and_the_term_but_not_elects_secrets() {
    Map<String, String> env =
        CommandProcess.commandEnvironment(
            Map.of(
                "PATH", "/usr/bin",
                "ELECTION_JDBC_URL", "jdbc:postgresql://db/app",
                "ELECTION_JDBC_PASSWORD", "hunter2",
                "ELECTION_ETCD_AUTH_TOKEN", "t0k3n",
                "ELECTION_KUBERNETES_CLIENT_KEY", "k3y"),
            Map.of("BATON_FENCING_TOKEN", "7"));

    assertThat(env)
        .containsEntry("PATH", "/usr/bin")
        .containsEntry("ELECTION_JDBC_URL", "jdbc:postgresql://db/app")
        .containsEntry("BATON_FENCING_TOKEN", "7")
        .doesNotContainKeys("ELECTION_JDBC_PASSWORD", "ELECTION_ETCD_AUTH_TOKEN", "ELECTION_KUBERNETES_CLIENT_KEY");
  }
}
