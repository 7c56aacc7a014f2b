package dev.baton.election;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The one check for keys nobody reads, which are almost always typos: an {@code election.*} key
 * that neither the core nor a backend knows, and a key whose prefix is a near miss of {@code
 * election.} ({@code electon.name}), which would otherwise be dropped unseen and reported later as
 * a missing {@code election.name}. {@link ElectionProperties#openStore()} and {@code
 * ElectorBuilder.configure} both use it.
 */
final class UnknownKeys {

  /** Edits (insert, delete, replace, swap neighbours) at most between a typo and what was meant. */
  private static final int MAX_EDITS = 2;

  private UnknownKeys() {}

  /**
   * True for {@code electon.name}, {@code Election.name}: a prefix one or two edits from {@code
   * election}.
   */
  static boolean looksMisspelt(String key) {
    int dot = key.indexOf('.');
    if (dot < 0 || key.startsWith(ElectionProperties.PREFIX)) {
      return false;
    }
    String prefix = key.substring(0, dot).toLowerCase(Locale.ROOT);
    return distance(prefix, "election") <= MAX_EDITS;
  }

  /**
   * Throws when {@code unknown} or {@code misspelt} is not empty, naming each key, the key it most
   * likely meant among {@code known}, and ending with {@code accepted}.
   */
  static void refuse(
      Collection<String> unknown,
      Collection<String> misspelt,
      Collection<String> known,
      String accepted) {
    List<String> problems = new ArrayList<>();
    for (String key : misspelt) {
      String meant = ElectionProperties.PREFIX + key.substring(key.indexOf('.') + 1);
      problems.add(
          "unknown key "
              + key
              + "; did you mean "
              + meant
              + "? (configuration keys start with '"
              + ElectionProperties.PREFIX
              + "')");
    }
    if (!unknown.isEmpty()) {
      StringBuilder text =
          new StringBuilder(
              "unknown configuration key"
                  + (unknown.size() > 1 ? "s " : " ")
                  + String.join(", ", unknown)
                  + " (a typo?)");
      for (String key : unknown) {
        closest(key, known)
            .ifPresent(
                meant ->
                    text.append("; did you mean ")
                        .append(meant)
                        .append(unknown.size() > 1 ? " for " + key : "")
                        .append('?'));
      }
      problems.add(text.toString());
    }
    if (!problems.isEmpty()) {
      String named = String.join("; ", problems);
      throw new ConfigurationException(
          named
              + (named.endsWith("?") ? " " : ". ")
              + Character.toUpperCase(accepted.charAt(0))
              + accepted.substring(1));
    }
  }

  private static Optional<String> closest(String key, Collection<String> known) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : known) {
      int d = distance(key, candidate);
      if (d < bestDistance) {
        best = candidate;
        bestDistance = d;
      }
    }
    return bestDistance <= Math.max(MAX_EDITS, key.length() / 5)
        ? Optional.of(best)
        : Optional.empty();
  }

  /** Optimal string alignment distance: Levenshtein plus swapping two neighbours, a common typo. */
  static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1
            && j > 1
            && a.charAt(i - 1) == b.charAt(j - 2)
            && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }
}
