package dev.baton.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class OptionsTest {

  @Test
  void defaultsWriteTheFullReportToDocs() {
    Main.Options o = Main.Options.parse();

    assertThat(o.out).isEqualTo(Path.of("docs"));
    assertThat(o.smoke).isFalse();
    assertThat(o.only).isEmpty();
  }

  @Test
  void readsEveryOption() {
    Main.Options o =
        Main.Options.parse(
            "--smoke",
            "--out",
            "x",
            "--only",
            "etcd,jetcd Election",
            "--no-scale",
            "--log",
            "l.log");

    assertThat(o.smoke).isTrue();
    assertThat(o.noScale).isTrue();
    assertThat(o.out).isEqualTo(Path.of("x"));
    assertThat(o.only).containsExactly("etcd", "jetcd Election");
    assertThat(o.log).contains(Path.of("l.log"));
  }

  @Test
  void anUnknownArgumentIsNamedWithWhatIsAccepted() {
    assertThatThrownBy(() -> Main.Options.parse("--fast"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'--fast'")
        .hasMessageContaining("--smoke");
  }

  @Test
  void scaleSizesReplaceTheDefaultSizes() {
    Main.Options o = Main.Options.parse("--scale-sizes", "10000,100");
    Settings s = Settings.full().withScaleSizes(o.scaleSizes);

    assertThat(o.scaleSizes).containsExactly(10_000, 100);
    assertThat(s.scaleSizes()).containsExactly(10_000, 100);
    assertThat(s.handoverRounds()).isEqualTo(Settings.full().handoverRounds());
    assertThat(Main.Options.parse().scaleSizes).isEmpty();
  }

  @Test
  void handoverRoundsGoOnPastTheLeastOnlyWithinTheWindowAndTheMost() {
    Settings s = Settings.full();
    Duration inWindow = s.handoverWindow().minusMillis(1);

    assertThat(s.moreHandoverRounds(s.handoverRounds() - 1, s.handoverWindow().multipliedBy(10)))
        .as("fewer than the least, however long they took")
        .isTrue();
    assertThat(s.moreHandoverRounds(s.handoverRounds(), inWindow)).isTrue();
    assertThat(s.moreHandoverRounds(s.handoverRounds(), s.handoverWindow())).isFalse();
    assertThat(s.moreHandoverRounds(s.handoverRoundsAtMost(), inWindow)).isFalse();
    assertThat(
            Settings.smokeTest()
                .moreHandoverRounds(Settings.smokeTest().handoverRounds(), Duration.ZERO))
        .as("the smoke test takes exactly its rounds")
        .isFalse();
  }

  @Test
  void aScaleSizeThatIsNoCountIsNamed() {
    assertThatThrownBy(() -> Main.Options.parse("--scale-sizes", "10k"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'10k'");
    assertThatThrownBy(() -> Main.Options.parse("--scale-sizes", "0"))
        .hasMessageContaining("at least 1");
  }

  @Test
  void anOptionWithoutItsValueSaysSo() {
    assertThatThrownBy(() -> Main.Options.parse("--out")).hasMessage("--out needs a value");
  }

  @Test
  void onlyMatchesContenderNamesIgnoringCase() {
    Settings s = Settings.smokeTest().onlyThese(java.util.Set.of("curator leaderlatch"));

    assertThat(s.includes("Curator LeaderLatch")).isTrue();
    assertThat(s.includes("ZooKeeper")).isFalse();
  }
}
