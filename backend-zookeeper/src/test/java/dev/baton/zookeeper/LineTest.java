package dev.baton.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

class LineTest {

  @Test
  void theLowestSequenceNumberIsFirstWhateverTheOrderTheChildrenComeIn() {
    assertThat(first(List.of("c-0000000012", "c-0000000003", "c-0000000007")))
        .isEqualTo("c-0000000003");
    assertThat(first(List.of())).isNull();
  }

  @Test
  void sequenceNumbersPastTheTenDigitsZooKeeperPadsToStillCompareAsNumbers() {
    // ZooKeeper's counter is a signed int: it wraps to a negative number printed with a minus,
    // which is not a sequence this store made; the largest one it does make is 2147483647.
    assertThat(first(List.of("c-2147483647", "c-0000000001"))).isEqualTo("c-0000000001");
    assertThat(Line.sequence("c-2147483647")).isEqualTo(2147483647L);
    assertThat(Line.sequence("c--2147483648")).isEqualTo(-1);
  }

  @Test
  void childrenThatAreNotCandidatesAreNotInLine() {
    assertThat(first(List.of("other", "c-", "c-12x", "x-0000000001"))).isNull();
    assertThat(first(List.of("c-0000000009", "notes"))).isEqualTo("c-0000000009");
  }

  @Test
  void theLeaseNodeOfEarlierReleasesHoldsTheElectionAheadOfTheLine() {
    assertThat(first(List.of("c-0000000001", "lease"))).isEqualTo("lease");
  }

  @Test
  void theNextInLineIsTheSecondLowestAndOnlyThoseBehindItAreFarBehind() {
    assertThat(
            Line.of(
                List.of("c-0000000012", "notes", "c-0000000003", "c-0000000007", "c-0000000009"),
                null))
        .isEqualTo(new Line("c-0000000003", "c-0000000007", null));
    assertThat(Line.of(List.of("c-0000000004"), null))
        .isEqualTo(new Line("c-0000000004", null, null));
    assertThat(Line.of(List.of("c-0000000004", "lease"), null))
        .isEqualTo(new Line("lease", "c-0000000004", null));

    Line line = new Line("c-0000000003", "c-0000000007", null);
    assertThat(line.farBehind("c-0000000003")).isFalse();
    assertThat(line.farBehind("c-0000000007")).isFalse();
    assertThat(line.farBehind("c-0000000009")).isTrue();
    assertThat(new Line("c-0000000003", null, null).farBehind("c-0000000009")).isFalse();
  }

  private static String first(List<String> children) {
    return Line.of(children, null).first();
  }

  @Test
  void aFirstInLineOlderThanTheLastWrittenGrantMustWriteForAHigherToken() {
    Line line = new Line("c-0000000001", null, stat(3, 9));
    assertThat(line.grantsOnRead(stat(10, 10))).as("joined after the last written grant").isTrue();
    assertThat(line.grantsOnRead(stat(7, 7))).as("joined before it").isFalse();
    assertThat(line.grantsOnRead(stat(7, 9))).as("granted by that very write").isFalse();
  }

  @Test
  void theNodeCreatedWithItsElectionNodeIsGrantedOnARead() {
    assertThat(new Line("c-0000000000", null, stat(5, 5)).grantsOnRead(stat(5, 5))).isTrue();
    // Written since (a new term of that node): the next grant writes again.
    assertThat(new Line("c-0000000000", null, stat(5, 8)).grantsOnRead(stat(5, 8))).isFalse();
  }

  private static Stat stat(long czxid, long mzxid) {
    Stat stat = new Stat();
    stat.setCzxid(czxid);
    stat.setMzxid(mzxid);
    return stat;
  }
}
