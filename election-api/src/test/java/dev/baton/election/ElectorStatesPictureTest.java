package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The picture of the elector's states in docs/ shows exactly the moves the engine allows. */
class ElectorStatesPictureTest {

  private static final Pattern ARROW = Pattern.compile("(?m)^([A-Z_]+) --> ([A-Z_]+)");

  @Test
  @DisplayName("docs/elector-states.puml draws every legal move of Phase.MOVES and no other")
  void thePictureDrawsTheLegalMoves() throws IOException {
    Path root = Path.of(System.getProperty("basedir", "")).toAbsolutePath().getParent();
    String picture = Files.readString(root.resolve("docs/elector-states.puml"));
    Set<String> drawn = new TreeSet<>();
    Matcher m = ARROW.matcher(picture);
    while (m.find()) {
      drawn.add(m.group(1) + " -> " + m.group(2));
    }

    Set<String> legal = new TreeSet<>();
    Phase.MOVES.forEach((from, to) -> to.forEach(t -> legal.add(from + " -> " + t)));

    assertThat(drawn).as("the moves the picture draws").isEqualTo(legal);
  }
}
