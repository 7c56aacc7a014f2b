package dev.baton.election;

import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Set;
import org.slf4j.Logger;

/**
 * How an elector reports store failures in a row: every failure matters, but a WARN with a stack
 * trace every retry period says no more than one per kind. So: the first failure of each kind in a
 * streak is a WARN (with its stack trace the first time that kind is seen), every tenth one a
 * one-line WARN reminder, the rest one DEBUG line each. A kind is the chain of exception classes
 * and the innermost message with its numbers taken out, so "connection refused" and then
 * "permission denied" in one streak are each told at WARN.
 *
 * <p>Confined to the engine executor.
 */
final class FailureStreak {

  private final Logger log;
  private final String logId;
  private final String storeName;
  private int inARow;
  private String lastKind;
  private final Set<String> traced = new HashSet<>();

  FailureStreak(Logger log, String logId, String storeName) {
    this.log = log;
    this.logId = logId;
    this.storeName = storeName;
  }

  void failed(String what, RuntimeException ex) {
    inARow++;
    String kind = kindOf(ex);
    boolean newKind = !kind.equals(lastKind);
    lastKind = kind;
    if (newKind && traced.add(kind)) {
      log.warn(
          "{}: {} on {} (failure {} in a row): {}", logId, what, storeName, inARow, causes(ex), ex);
    } else if (newKind || inARow % 10 == 0) {
      log.warn(
          "{}: {} on {} (failure {} in a row): {}", logId, what, storeName, inARow, causes(ex));
    } else {
      log.debug("{}: {} (failure {} in a row): {}", logId, what, inARow, causes(ex));
    }
  }

  void recovered() {
    if (inARow > 0) {
      log.info("{}: {} answers again after {} failures", logId, storeName, inARow);
    }
    reset();
  }

  void reset() {
    inARow = 0;
    lastKind = null;
    traced.clear();
  }

  /** The messages of the exception and its causes on one line, most specific last. */
  static String causes(Throwable ex) {
    StringBuilder line = new StringBuilder(String.valueOf(ex));
    Set<Throwable> seen = identitySet();
    seen.add(ex);
    for (Throwable c = ex.getCause(); c != null && seen.add(c); c = c.getCause()) {
      line.append("; caused by ").append(c);
    }
    return line.toString();
  }

  private static String kindOf(Throwable ex) {
    StringBuilder kind = new StringBuilder();
    Throwable innermost = ex;
    Set<Throwable> seen = identitySet();
    for (Throwable c = ex; c != null && seen.add(c); c = c.getCause()) {
      kind.append(c.getClass().getName()).append('/');
      innermost = c;
    }
    String message = innermost.getMessage() == null ? "" : innermost.getMessage();
    return kind.append(message.replaceAll("[0-9]+", "#")).toString();
  }

  /**
   * A chain of causes can loop (initCause lets A cause B and B cause A): a walk stops at a cause it
   * has seen, or it would never end, and the engine would never get to guard the term's deadline.
   */
  private static Set<Throwable> identitySet() {
    return Collections.newSetFromMap(new IdentityHashMap<>());
  }
}
