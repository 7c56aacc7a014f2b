package dev.baton.cli;

/**
 * Arguments {@code elect} cannot act on. The message names the argument, the value given and what
 * is accepted; {@code elect} prints it and exits before starting anything: with status 2, or 127
 * when it is COMMAND that cannot be found or run, as a shell reports it.
 */
final class UsageException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int status;

  UsageException(String message) {
    this(message, Elect.USAGE);
  }

  private UsageException(String message, int status) {
    super(message);
    this.status = status;
  }

  /** COMMAND is missing or not executable: status 127, as {@code sh -c} gives. */
  static UsageException commandNotFound(String message) {
    return new UsageException(message, LeaderCommand.CANNOT_START);
  }

  int status() {
    return status;
  }
}
