package dev.baton.cli;

/**
 * Arguments {@code elect} cannot act on. The message names the argument, the value given and what
 * is accepted; {@code elect} prints it and exits with status 2 before starting anything.
 */
final class UsageException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  UsageException(String message) {
    super(message);
  }
}
