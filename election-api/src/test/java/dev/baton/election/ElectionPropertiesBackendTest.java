package dev.baton.election;

import static dev.baton.election.FakeBackends.deploymentWith;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.baton.election.FakeBackends.Alpha;
import dev.baton.election.FakeBackends.Beta;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Choosing the backend with {@link java.util.ServiceLoader} and refusing keys nobody reads. Each
 * test deploys exactly the providers it names (see {@link FakeBackends#deploymentWith}), so the
 * module's shared test class path keeps only election-api's own {@code memory} provider.
 */
class ElectionPropertiesBackendTest {

  @TempDir Path dir;

  private static ElectionProperties config(String... keysAndValues) {
    return config(Map.of(), keysAndValues);
  }

  private static ElectionProperties config(
      Map<String, String> environment, String... keysAndValues) {
    Properties p = new Properties();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ElectionProperties.of(p, environment);
  }

  private String opened(ElectionProperties config, Class<?>... deployed) throws IOException {
    try (LeaseStore store = config.openStore(deploymentWith(dir, deployed))) {
      return store.describe();
    }
  }

  /** The message of the ConfigurationException that opening {@code config} must throw. */
  private String refusal(ElectionProperties config, Class<?>... deployed) throws IOException {
    ClassLoader deployment = deploymentWith(dir, deployed);
    Throwable thrown = catchThrowable(() -> config.openStore(deployment));
    assertThat(thrown).isInstanceOf(ConfigurationException.class);
    return thrown.getMessage();
  }

  // --- choosing -------------------------------------------------------------------------------

  @Test
  void memoryIsOpenedByNameFromElectionApisOwnServicesFile() {
    ElectionProperties config = config(ElectionProperties.BACKEND, "memory");

    try (LeaseStore store = config.openStore()) {
      assertThat(store).isInstanceOf(MemoryLeaseStore.class);
    }
    assertThat(config.backendName()).isEqualTo("memory");
  }

  @Test
  void theNamedBackendIsOpenedWhenSeveralArePresent() throws IOException {
    assertThat(
            opened(
                config("election.backend", "beta"),
                Alpha.class,
                Beta.class,
                MemoryLeaseStoreProvider.class))
        .isEqualTo("beta at default");
  }

  @Test
  void theBackendMayBeNamedInTheEnvironment() throws IOException {
    ElectionProperties config =
        config(Map.of("ELECTION_BACKEND", "beta"), "election.backend", "alpha");

    assertThat(opened(config, Alpha.class, Beta.class)).startsWith("beta");
  }

  @Test
  void memoryMayBeNamedAlongsideOtherBackends() throws IOException {
    assertThat(
            opened(
                config("election.backend", "memory"),
                Alpha.class,
                Beta.class,
                MemoryLeaseStoreProvider.class))
        .isEqualTo("memory");
  }

  @Test
  void anUnknownBackendIsRefusedListingTheOnesFound() throws IOException {
    assertThat(
            refusal(
                config("election.backend", "gamma"),
                Alpha.class,
                Beta.class,
                MemoryLeaseStoreProvider.class))
        .contains("election.backend", "'gamma'", "alpha, beta, memory");
  }

  @Test
  void severalBackendsAndNoChoiceIsRefusedListingThem() throws IOException {
    assertThat(refusal(config(), Alpha.class, Beta.class, MemoryLeaseStoreProvider.class))
        .contains("election.backend", "several", "alpha, beta");
  }

  @Test
  void theOnlyBackendPresentIsChosenWithoutElectionBackend() throws IOException {
    assertThat(
            opened(
                config("election.alpha.url", "tcp://127.0.0.1:1"),
                Alpha.class,
                MemoryLeaseStoreProvider.class))
        .isEqualTo("alpha at tcp://127.0.0.1:1");
  }

  @Test
  void openStoreLooksInTheContextClassLoader() throws IOException {
    ClassLoader deployment = deploymentWith(dir, Alpha.class, MemoryLeaseStoreProvider.class);
    ElectionProperties config = config("election.alpha.url", "tcp://127.0.0.1:2");
    Thread thread = Thread.currentThread();
    ClassLoader before = thread.getContextClassLoader();
    thread.setContextClassLoader(deployment);
    try (LeaseStore store = config.openStore()) {
      assertThat(store.describe()).isEqualTo("alpha at tcp://127.0.0.1:2");
      assertThat(config.backendName()).isEqualTo("alpha");
    } finally {
      thread.setContextClassLoader(before);
    }
  }

  @Test
  void memoryAloneIsNotChosenWithoutBeingNamed() throws IOException {
    assertThat(refusal(config(), MemoryLeaseStoreProvider.class))
        .contains(
            "election.backend is not set",
            "no backend jar",
            "backend-jdbc",
            "election.backend=memory");
  }

  @Test
  void aDeploymentThatListsNoProviderAtAllGetsTheSameAdvice() throws IOException {
    assertThat(refusal(config())).contains("no backend jar", "election.backend=memory");
  }

  @Test
  void aDeploymentThatListsNoProviderCanStillNameMemory() throws IOException {
    assertThat(opened(config("election.backend", "memory"))).isEqualTo("memory");
  }

  @Test
  void aMissingRequiredBackendKeyIsNamedWithItsEnvironmentVariable() throws IOException {
    assertThat(refusal(config("election.backend", "alpha"), Alpha.class))
        .contains("election.alpha.url", "ELECTION_ALPHA_URL");
  }

  @Test
  void aRequiredBackendKeyMayComeFromTheEnvironment() throws IOException {
    ElectionProperties config = config(Map.of("ELECTION_ALPHA_URL", "tcp://127.0.0.1:3"));

    assertThat(opened(config, Alpha.class)).isEqualTo("alpha at tcp://127.0.0.1:3");
  }

  // --- unknown keys ---------------------------------------------------------------------------

  @ParameterizedTest(name = "{0} is refused")
  @ValueSource(
      strings = {
        "election.lease-durration",
        "election.alpha.urll",
        "election.gamma.url",
        "election.url"
      })
  void anUnknownElectionKeyIsRefusedAsALikelyTypoListingTheKeysAccepted(String typo)
      throws IOException {
    assertThat(refusal(config("election.alpha.url", "tcp://127.0.0.1:4", typo, "x"), Alpha.class))
        .contains(typo, "typo")
        .contains(
            "election.alpha.url",
            "election.alpha.password",
            "election.lease-duration",
            "election.renew-deadline");
  }

  @Test
  void everyUnknownKeyIsNamedAtOnce() throws IOException {
    assertThat(
            refusal(
                config(
                    "election.alpha.url", "u", "election.nmae", "x", "election.alpha.tls", "true"),
                Alpha.class))
        .contains("election.alpha.tls", "election.nmae");
  }

  @Test
  void anUnknownKeysValueIsNotShownEvenWhenItLooksLikeASecret() throws IOException {
    assertThat(
            refusal(
                config("election.alpha.url", "u", "election.alpha.passwrd", "hunter2"),
                Alpha.class))
        .contains("election.alpha.passwrd")
        .doesNotContain("hunter2");
  }

  @Test
  void aKeyOfAnotherBackendThatIsPresentIsTolerated() throws IOException {
    ElectionProperties config =
        config(
            "election.backend",
            "alpha",
            "election.alpha.url",
            "tcp://127.0.0.1:7",
            "election.beta.url",
            "tcp://127.0.0.1:8");

    assertThat(opened(config, Alpha.class, Beta.class)).isEqualTo("alpha at tcp://127.0.0.1:7");
  }

  @Test
  void keysOfOtherPresentBackendsAreToleratedWhenMemoryIsChosen() throws IOException {
    ElectionProperties config =
        config("election.backend", "memory", "election.alpha.url", "u", "election.beta.url", "v");

    assertThat(opened(config, Alpha.class, Beta.class, MemoryLeaseStoreProvider.class))
        .isEqualTo("memory");
  }

  @Test
  void aKeyOfABackendThatIsNotDeployedIsRefused() throws IOException {
    // beta's class is on the test class path, but this deployment does not list it.
    assertThat(refusal(config("election.alpha.url", "u", "election.beta.url", "v"), Alpha.class))
        .contains("election.beta.url", "typo");
  }

  @Test
  void aKeyUnderAnotherBackendsPrefixThatItDoesNotReadIsRefused() throws IOException {
    assertThat(
            refusal(
                config(
                    "election.backend",
                    "alpha",
                    "election.alpha.url",
                    "u",
                    "election.beta.ulr",
                    "v"),
                Alpha.class,
                Beta.class))
        .contains("election.beta.ulr", "typo");
  }

  @Test
  void theKnownKeysAreTheCoreKeysAndThoseOfEveryDeployedBackend() throws IOException {
    ClassLoader deployment = deploymentWith(dir, Alpha.class, Beta.class);
    Thread thread = Thread.currentThread();
    ClassLoader before = thread.getContextClassLoader();
    thread.setContextClassLoader(deployment);
    try {
      assertThat(ElectionProperties.knownKeys())
          .containsExactlyInAnyOrder(
              ElectionProperties.BACKEND,
              ElectionProperties.NAME,
              ElectionProperties.CANDIDATE_ID,
              ElectionProperties.LEASE_DURATION,
              ElectionProperties.RENEW_DEADLINE,
              ElectionProperties.RETRY_PERIOD,
              Alpha.URL,
              Alpha.PASSWORD,
              Beta.URL);
    } finally {
      thread.setContextClassLoader(before);
    }
  }
}
