package dev.baton.conformance;

import dev.baton.election.ElectionListener;
import dev.baton.election.Elector;
import dev.baton.election.Term;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One elector of a scenario, with the terms it was told of, recorded in the history as they come.
 */
final class Candidate implements ElectionListener {

  private final Node node;
  private final String id;
  private final String election;
  private final History history;
  private final List<Term> elected = new CopyOnWriteArrayList<>();
  private final List<Term> revoked = new CopyOnWriteArrayList<>();
  private volatile Elector elector;

  Candidate(Node node, String election, History history) {
    this(node, node.name(), election, history);
  }

  /** A candidate whose id is not its node's name (two nodes sharing one id, say). */
  Candidate(Node node, String id, String election, History history) {
    this.node = node;
    this.id = id;
    this.election = election;
    this.history = history;
  }

  void attach(Elector elector) {
    this.elector = elector;
  }

  Elector elector() {
    return elector;
  }

  Node node() {
    return node;
  }

  /** The candidate id, the node's name unless given. */
  String name() {
    return id;
  }

  String election() {
    return election;
  }

  boolean isLeader() {
    return elector.isLeader();
  }

  /** The term this candidate leads now, once its {@code onElected} for it has come. */
  Optional<Term> toldTerm() {
    return elector.currentTerm().filter(elected::contains);
  }

  Optional<String> currentLeader() {
    return elector.currentLeader();
  }

  /** Terms this candidate was elected for, in order. */
  List<Term> elected() {
    return List.copyOf(elected);
  }

  /** Terms whose {@code onRevoked} came, in order. */
  List<Term> revoked() {
    return List.copyOf(revoked);
  }

  Optional<Term> lastElected() {
    List<Term> all = elected();
    return all.isEmpty() ? Optional.empty() : Optional.of(all.get(all.size() - 1));
  }

  @Override
  public void onElected(Term term) {
    elected.add(term);
    history.recordElected(election, name(), term.token());
  }

  @Override
  public void onRevoked(Term term) {
    history.recordRevoked(election, name(), term.token());
    revoked.add(term);
  }

  @Override
  public String toString() {
    String where = id.equals(node.name()) ? "" : " on " + node.name();
    return name() + where + (elector != null && elector.isLeader() ? " (leader)" : "");
  }
}
