package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UrlSecretsTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "PostgreSQL parameters      | jdbc:postgresql://db:5432/app?user=u&password=p                  | jdbc:postgresql://db:5432/app?user=u&password=<hidden>",
        "password first             | jdbc:postgresql://db/app?password=p&ssl=true                     | jdbc:postgresql://db/app?password=<hidden>&ssl=true",
        "sslpassword                | jdbc:postgresql://db/app?sslmode=verify-full&sslpassword=k3y     | jdbc:postgresql://db/app?sslmode=verify-full&sslpassword=<hidden>",
        "user info                  | jdbc:mariadb://u:p@db:3306/app                                   | jdbc:mariadb://u:<hidden>@db:3306/app",
        "user info, odd characters  | jdbc:mysql://app:s3cr%3At!$@db/app                               | jdbc:mysql://app:<hidden>@db/app",
        "user without password      | jdbc:mariadb://u@db/app                                          | jdbc:mariadb://u@db/app",
        "H2 semicolon parameters    | jdbc:h2:file:/tmp/x;USER=sa;PASSWORD=p;AUTO_SERVER=TRUE          | jdbc:h2:file:/tmp/x;USER=sa;PASSWORD=<hidden>;AUTO_SERVER=TRUE",
        "SQL Server style           | jdbc:sqlserver://db:1433;user=u;password=p                       | jdbc:sqlserver://db:1433;user=u;password=<hidden>",
        "Oracle thin                | jdbc:oracle:thin:scott/tiger@db:1521/orcl                        | jdbc:oracle:thin:scott/<hidden>@db:1521/orcl",
        "etcd endpoints, one with   | http://root:pw@127.0.0.1:2379,http://127.0.0.1:22379             | http://root:<hidden>@127.0.0.1:2379,http://127.0.0.1:22379",
        "etcd endpoints, both with  | https://a:x@e1:2379,https://b:y@e2:2379                          | https://a:<hidden>@e1:2379,https://b:<hidden>@e2:2379",
        "a token parameter          | https://k8s:6443/api?access_token=abc                            | https://k8s:6443/api?access_token=<hidden>",
        "nothing to hide            | jdbc:postgresql://127.0.0.1:5432/test                            | jdbc:postgresql://127.0.0.1:5432/test",
        "a port is not a password   | http://127.0.0.1:2379/v3?x=a@b                                   | http://127.0.0.1:2379/v3?x=a@b",
      })
  void hides_the_password_and_keeps_the_rest(String form, String url, String shown) {
    assertThat(UrlSecrets.redact(url)).isEqualTo(shown);
    assertThat(UrlSecrets.carriesSecret(url)).isEqualTo(!url.equals(shown));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "election.jdbc.url | jdbc:postgresql://h/db?user=u&password=p | {election.jdbc.url=jdbc:postgresql://h/db?user=u&password=<hidden>}",
        "election.jdbc.url | jdbc:mariadb://u:p@h/db                  | {election.jdbc.url=jdbc:mariadb://u:<hidden>@h/db}",
        "election.etcd.endpoints | http://u:p@h:2379                  | {election.etcd.endpoints=http://u:<hidden>@h:2379}",
        "election.jdbc.password | hunter2                             | {election.jdbc.password=<hidden>}",
      })
  void election_properties_never_print_a_password(String key, String value, String printed) {
    Properties props = new Properties();
    props.setProperty(key, value);
    ElectionProperties p = ElectionProperties.of(props, Map.of());

    assertThat(p.toString())
        .isEqualTo(printed)
        .doesNotContain("hunter2")
        .doesNotContain(":p@")
        .doesNotContain("=p");
  }
}
