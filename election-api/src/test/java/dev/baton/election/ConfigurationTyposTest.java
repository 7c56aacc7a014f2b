package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What a user's slips in configuration turn into: one message that names the slip and the fix. */
class ConfigurationTyposTest {

  private static ElectionProperties properties(String... keyValues) {
    Properties p = new Properties();
    for (int i = 0; i < keyValues.length; i += 2) {
      p.setProperty(keyValues[i], keyValues[i + 1]);
    }
    return ElectionProperties.of(p);
  }

  @Test
  @DisplayName("configure refuses an unknown election key, suggesting the key meant")
  void configureRefusesUnknownKeys() {
    ElectionProperties p = properties("election.name", "cron", "election.renew-dealine", "5s");

    assertThatThrownBy(() -> Elector.builder(new MemoryLeaseStore()).configure(p))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageStartingWith(
            "unknown configuration key election.renew-dealine (a typo?); did you mean election.renew-deadline? Accepted: election.backend, ");
  }

  @Test
  @DisplayName("a misspelt prefix is reported as such, not as a missing election.name")
  void misspeltPrefixIsNamed() {
    ElectionProperties p = properties("electon.name", "cron");

    assertThatThrownBy(() -> Elector.builder(new MemoryLeaseStore()).configure(p))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageStartingWith("unknown key electon.name; did you mean election.name?");
    assertThatThrownBy(() -> p.with(ElectionProperties.BACKEND, "memory").openStore())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageStartingWith("unknown key electon.name; did you mean election.name?");
  }

  @Test
  @DisplayName("keys of other namespaces that merely start alike are left alone")
  void unrelatedKeysAreNotTypos() {
    ElectionProperties p =
        properties(
            "election.name",
            "cron",
            "java.version",
            "17",
            "elevator.floor",
            "3",
            "selectionist.mode",
            "x");

    Elector e = Elector.builder(new MemoryLeaseStore()).configure(p).build();

    assertThat(e.election()).isEqualTo("cron");
  }

  @Test
  @DisplayName("a timing rule broken by a default says that the value is the default")
  void defaultsAreCalledDefaults() {
    ElectionProperties p = properties("election.name", "cron", "election.lease-duration", "5s");

    assertThatThrownBy(() -> Elector.builder(new MemoryLeaseStore()).configure(p).build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessage(
            "renewDeadline (election.renew-deadline) must be shorter than leaseDuration (5s), but was 10s, the default;"
                + " set election.renew-deadline as well");
    assertThatThrownBy(
            () ->
                Elector.builder(new MemoryLeaseStore())
                    .election("cron")
                    .renewDeadline(Duration.ofSeconds(20))
                    .build())
        .hasMessage(
            "renewDeadline (election.renew-deadline) must be shorter than leaseDuration (15s, the default), but was 20s;"
                + " set election.lease-duration as well");
    assertThatThrownBy(
            () ->
                Elector.builder(new MemoryLeaseStore())
                    .election("cron")
                    .renewDeadline(Duration.ofSeconds(2))
                    .build())
        .hasMessage(
            "retryPeriod (election.retry-period) × 1.2 must be shorter than renewDeadline (2s), but retryPeriod was 2s, the default;"
                + " set election.retry-period as well");
  }

  @Test
  @DisplayName("openStore(type) gives the backend's own store without a cast")
  void typedStore() {
    try (MemoryLeaseStore store =
        properties("election.backend", "memory").openStore(MemoryLeaseStore.class)) {
      assertThat(store.read("any")).isEmpty();
    }
  }

  @Test
  @DisplayName("openStore(type) refuses a backend that opens another kind of store, naming both")
  void typedStoreOfAnotherBackend() {
    ElectionProperties p = properties("election.backend", "memory");

    assertThatThrownBy(() -> p.openStore(ObservedTimeLeaseStore.class))
        .isInstanceOf(ConfigurationException.class)
        .hasMessage(
            "election.backend: the code needs a store of type ObservedTimeLeaseStore, but backend 'memory' opens one of type MemoryLeaseStore;"
                + " configure the backend the code was written for, or use openStore() and the LeaseStore interface");
  }
}
