package dev.baton.file;

import static java.util.Objects.requireNonNull;

import dev.baton.election.ConfigurationException;
import dev.baton.election.ElectionProperties;
import dev.baton.election.LeaseStore;
import dev.baton.election.LeaseStoreProvider;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * Opens a {@link FileLeaseStore} for {@code election.backend=file}.
 *
 * <p>Keys: {@value #DIRECTORY} (default {@value #DEFAULT_DIRECTORY}, relative to the working
 * directory; every candidate of an election must name the same directory) and {@value
 * #CALL_TIMEOUT} (default 1s, at most 5s and at most half of {@code election.renew-deadline}).
 */
public final class FileLeaseStoreProvider implements LeaseStoreProvider {

  public static final String NAME = "file";
  public static final String DIRECTORY = "election.file.directory";
  public static final String CALL_TIMEOUT = "election.file.call-timeout";
  public static final String DEFAULT_DIRECTORY = ".baton/leases";

  private static final Duration DEFAULT_RENEW_DEADLINE = Duration.ofSeconds(10);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> keys() {
    return Set.of(DIRECTORY, CALL_TIMEOUT);
  }

  @Override
  public LeaseStore open(ElectionProperties properties) {
    requireNonNull(properties, "properties");
    String dir = properties.get(DIRECTORY).orElse(DEFAULT_DIRECTORY);
    Path directory;
    try {
      directory = Path.of(dir);
    } catch (InvalidPathException e) {
      throw new ConfigurationException(
          DIRECTORY + ": '" + dir + "' is not a path: " + e.getMessage(), e);
    }
    Duration callTimeout = properties.duration(CALL_TIMEOUT, FileLeaseStore.DEFAULT_CALL_TIMEOUT);
    Duration renewDeadline =
        properties.duration(ElectionProperties.RENEW_DEADLINE, DEFAULT_RENEW_DEADLINE);
    if (callTimeout.multipliedBy(2).compareTo(renewDeadline) > 0) {
      throw new ConfigurationException(
          CALL_TIMEOUT
              + ": "
              + callTimeout.toMillis()
              + "ms must be at most half of "
              + ElectionProperties.RENEW_DEADLINE
              + " ("
              + renewDeadline.toMillis()
              + "ms), so that a leader whose disk stops answering steps down in time");
    }
    FileLeaseStore.Builder builder = FileLeaseStore.builder(directory);
    try {
      builder.callTimeout(callTimeout);
    } catch (ConfigurationException e) {
      throw new ConfigurationException(CALL_TIMEOUT + ": " + e.getMessage(), e);
    }
    try {
      return builder.build();
    } catch (ConfigurationException e) {
      throw new ConfigurationException(DIRECTORY + ": " + e.getMessage(), e);
    }
  }
}
