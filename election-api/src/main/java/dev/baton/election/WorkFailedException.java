package dev.baton.election;

/** Leader work that could not start; the elector steps down. */
final class WorkFailedException extends ElectionException {
  final transient Term term;

  WorkFailedException(Term term, Throwable cause) {
    super(term.election(), "leader work failed to start", cause);
    this.term = term;
  }
}
