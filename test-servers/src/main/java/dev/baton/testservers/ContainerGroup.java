package dev.baton.testservers;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** The members of a cluster in containers, one container each, in member order. */
final class ContainerGroup implements AutoCloseable {

  private final List<ServerContainer> members = new ArrayList<>();

  void add(ServerContainer member) {
    members.add(member);
  }

  int size() {
    return members.size();
  }

  void kill(int index) {
    members.get(index).kill();
  }

  void restart(int index) {
    members.get(index).restart();
  }

  void pause(int index) {
    members.get(index).pause();
  }

  void unpause(int index) {
    members.get(index).unpause();
  }

  void killAll() {
    members.forEach(ServerContainer::kill);
  }

  /** Starts every killed member again; a member still running is left alone. */
  void restartKilled() {
    members.stream().filter(m -> !m.isRunning()).forEach(ServerContainer::restart);
  }

  List<String> images() {
    return members.stream().map(ServerContainer::image).toList();
  }

  /** Every member's output so far, for a failure message. */
  String logs() {
    return members.stream().map(m -> m + ":\n" + m.logs()).collect(Collectors.joining("\n"));
  }

  /** Removes every member's container; one that fails to go does not keep the others. */
  @Override
  public void close() {
    RuntimeException failure = null;
    for (ServerContainer m : members) {
      try {
        m.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
