package dev.baton.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.election.MonotonicClock;
import dev.baton.zookeeper.Places.Grant;
import dev.baton.zookeeper.Places.Place;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class PlacesTest {

  private final List<Place> givenBack = new CopyOnWriteArrayList<>();
  private final Places places = new Places(MonotonicClock.system(), givenBack::add);
  private final ElectionNodes nodes = ElectionNodes.of("/baton/elections", null, "jobs");

  private Place place(String node, Duration ttl) {
    return new Place(nodes, "a", node, 1, ttl);
  }

  @Test
  void aPlaceGrantedOnceIsNeverGrantedOnAReadAgain() {
    Place place = place("c-0000000001", Duration.ofSeconds(5));
    assertThat(places.grant(place, true)).isEqualTo(Grant.FIRST);

    // The next grant must write, for a new token.
    assertThat(places.grant(place, true)).isEqualTo(Grant.REFUSED);
    assertThat(places.grant(place, false)).as("a grant that writes").isEqualTo(Grant.AGAIN);
    assertThat(givenBack).isEmpty();
  }

  @Test
  void aFirstGrantWhoseWriteIsUnknownLeavesTheLineWhenTheCandidateDoesNotFollow() {
    Place place = place("c-0000000001", Duration.ofSeconds(5));
    Grant grant = places.grant(place, false);
    assertThat(grant).isEqualTo(Grant.FIRST);

    places.grantUnknown(place, grant);

    assertThat(givenBack).containsExactly(place);
    assertThat(places.grant(place, false)).as("a place given back").isEqualTo(Grant.REFUSED);
  }

  @Test
  void aNewTermWhoseWriteIsUnknownKeepsTheTermBeforeIt() {
    places.followed("jobs", "a");
    Place place = place("c-0000000001", Duration.ofSeconds(5));
    assertThat(places.grant(place, true)).isEqualTo(Grant.FIRST);

    places.grantUnknown(place, places.grant(place, false));
    places.unfollowed("jobs", "a");

    assertThat(givenBack).as("a lease that may be in use").isEmpty();
    assertThat(places.isGranted(place)).isTrue();
  }

  @Test
  void aFollowerThatStopsFollowingGivesItsPlaceBackUnlessItWasGranted() {
    places.followed("jobs", "a");
    places.followed("jobs", "b");
    Place waiting = place("c-0000000002", Duration.ofSeconds(5));
    Place leading = new Place(nodes, "b", "c-0000000001", 1, Duration.ofSeconds(5));
    assertThat(places.keep(waiting)).isTrue();
    assertThat(places.grant(leading, true)).isEqualTo(Grant.FIRST);

    places.unfollowed("jobs", "a");
    places.unfollowed("jobs", "b");

    assertThat(givenBack).containsExactly(waiting);
    assertThat(places.grant(waiting, true)).as("a place given back").isEqualTo(Grant.REFUSED);
  }

  @Test
  void aFirstGrantWhoseWriteIsUnknownIsAFirstGrantAgainNextTime() {
    places.followed("jobs", "a");
    Place place = place("c-0000000001", Duration.ofSeconds(5));
    assertThat(places.keep(place)).isTrue();
    places.grantUnknown(place, places.grant(place, false));

    // Nobody leads on it, so the next unknown outcome does not protect it as a lease either.
    Grant again = places.grant(place, false);
    assertThat(again).isEqualTo(Grant.FIRST);
    places.grantUnknown(place, again);
    places.unfollowed("jobs", "a");
    assertThat(givenBack).containsExactly(place);
  }

  @Test
  void aRefusedCandidateThatDoesNotFollowKeepsNoPlace() {
    assertThat(places.keep(place("c-0000000002", Duration.ofSeconds(5)))).isFalse();
  }

  @Test
  void aPlaceWhoseCandidateDoesNotTryForItsTtlAfterTheLineChangedIsGivenBack() {
    places.followed("jobs", "a");
    places.followed("jobs", "b");
    Place stuck = place("c-0000000002", Duration.ofMillis(200));
    Place trying = new Place(nodes, "b", "c-0000000003", 1, Duration.ofMillis(200));
    assertThat(places.keep(stuck)).isTrue();
    assertThat(places.keep(trying)).isTrue();

    places.lineChanged("jobs");
    places.attemptStarts("jobs", "b");

    await().atMost(Duration.ofSeconds(10)).until(() -> givenBack.contains(stuck));
    assertThat(givenBack).containsExactly(stuck);
    assertThat(places.grant(stuck, true)).isEqualTo(Grant.REFUSED);
    assertThat(places.grant(trying, true)).isEqualTo(Grant.FIRST);
  }
}
