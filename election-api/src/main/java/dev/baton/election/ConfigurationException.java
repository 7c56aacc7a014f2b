package dev.baton.election;

/**
 * Configuration that cannot work. The message names the key or argument, the value that was given
 * and what is accepted.
 */
public class ConfigurationException extends ElectionException {

  public ConfigurationException(String message) {
    super(null, message);
  }

  public ConfigurationException(String message, Throwable cause) {
    super(null, message, cause);
  }
}
