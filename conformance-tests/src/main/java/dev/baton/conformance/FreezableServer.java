package dev.baton.conformance;

/**
 * A server a test can freeze as a hung server looks to its clients (its sockets stay open and
 * nothing answers) and thaw again: a child process stopped with SIGSTOP ({@link ServerProcess}), or
 * a paused container.
 */
public interface FreezableServer {

  void freeze();

  void thaw();
}
