package dev.baton.election;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Writes every callback down, in order, as short strings a test can compare. */
final class RecordingListener implements ElectionListener {

  private final List<String> events = new ArrayList<>();
  private final List<Term> terms = new ArrayList<>();

  @Override
  public synchronized void onElected(Term term) {
    events.add("elected " + term.token());
    terms.add(term);
  }

  @Override
  public synchronized void onRevoked(Term term) {
    events.add("revoked " + term.token());
  }

  @Override
  public synchronized void onLeaderChanged(Optional<String> leader) {
    events.add("leader " + leader.orElse("-"));
  }

  synchronized List<String> events() {
    return List.copyOf(events);
  }

  synchronized List<String> terms() {
    List<String> out = new ArrayList<>();
    for (String e : events) {
      if (e.startsWith("elected") || e.startsWith("revoked")) {
        out.add(e);
      }
    }
    return out;
  }

  synchronized Term lastTerm() {
    return terms.get(terms.size() - 1);
  }
}
