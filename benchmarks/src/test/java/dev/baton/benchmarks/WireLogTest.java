package dev.baton.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.benchmarks.WireLog.Kind;
import dev.baton.benchmarks.WireLog.Split;
import java.util.List;
import org.junit.jupiter.api.Test;

class WireLogTest {

  private static final long MS = 1_000_000;

  @Test
  void aNextLeaderThatAsksAfterItIsToldSpendsTheStepsInBetween() {
    WireLog leaver = new WireLog();
    leaver.add(1 * MS, Kind.REQUEST, "getData", false);
    leaver.add(2 * MS, Kind.REQUEST, "delete", true);
    WireLog next = new WireLog();
    next.add(3 * MS, Kind.ANSWER, "keep-alive", false);
    next.add(5 * MS, Kind.EVENT, "watch event", false);
    next.add(6 * MS, Kind.REQUEST, "sync", false);
    next.add(6 * MS + 1, Kind.REQUEST, "multiRead", false);
    next.add(8 * MS, Kind.ANSWER, "sync", false);
    next.add(9 * MS, Kind.ANSWER, "multiRead", false);

    Split s = WireLog.handover(leaver, next, 0, 10 * MS).orElseThrow();

    assertThat(s).isEqualTo(new Split(2, 3, 1, 3, 1, "sync + multiRead"));
  }

  @Test
  void aNextLeaderToldByTheAnswerItWaitedForSendsNothingMore() {
    WireLog leaver = new WireLog();
    leaver.add(1 * MS, Kind.REQUEST, "Resign", true);
    WireLog next = new WireLog();
    next.add(4 * MS, Kind.EVENT, "Campaign", false);

    Split s = WireLog.handover(leaver, next, 0, 5 * MS).orElseThrow();

    assertThat(s).isEqualTo(new Split(1, 3, 0, 0, 1, "none"));
    assertThat(WireLog.mostly(List.of(s, s))).isEqualTo("none");
  }

  @Test
  void aRoundWithoutARelease_orWithoutTheNextBeingTold_isNotTakenApart() {
    WireLog quiet = new WireLog();
    WireLog told = new WireLog();
    told.add(2 * MS, Kind.EVENT, "watch event", false);
    WireLog released = new WireLog();
    released.add(1 * MS, Kind.REQUEST, "delete", true);

    assertThat(WireLog.handover(quiet, told, 0, 3 * MS)).isEmpty();
    assertThat(WireLog.handover(released, quiet, 0, 3 * MS)).isEmpty();
  }
}
