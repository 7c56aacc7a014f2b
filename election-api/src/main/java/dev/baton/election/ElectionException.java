package dev.baton.election;

import java.util.Optional;

/**
 * The root of Baton's exceptions. Unchecked; carries the election it concerns when there is one, so
 * a log line says which election failed without the caller adding it.
 */
public class ElectionException extends RuntimeException {

  private final String election;

  public ElectionException(String election, String message) {
    this(election, message, null);
  }

  public ElectionException(String election, String message, Throwable cause) {
    super(election == null ? message : "election '" + election + "': " + message, cause);
    this.election = election;
  }

  /** The election concerned; empty for errors that concern none (configuration, say). */
  public Optional<String> election() {
    return Optional.ofNullable(election);
  }
}
