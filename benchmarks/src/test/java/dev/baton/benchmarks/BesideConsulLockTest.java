package dev.baton.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.benchmarks.BesideConsulLock.Side;
import dev.baton.testservers.CommandTakeover.Round;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BesideConsulLockTest {

  @Test
  void theSectionIsInAFullRunAndSelectedByItsName() {
    assertThat(Settings.full().includes(BesideConsulLock.NAME)).isTrue();
    assertThat(Settings.full().onlyThese(Set.of("Consul Lock")).includes(BesideConsulLock.NAME))
        .isTrue();
    assertThat(Settings.full().onlyThese(Set.of("Consul")).includes(BesideConsulLock.NAME))
        .as("the Consul rows alone leave the section out")
        .isFalse();
  }

  @Test
  void aRowPerFaultWithBothToolsSideBySideAndTheirSettingsStated() {
    Side elect =
        new Side(
            "`elect run`",
            BesideConsulLock.ELECT_SETTINGS,
            List.of(
                new Round("SIGTERM", 199, 0, false),
                new Round("SIGKILL", 29_900, 0, false),
                new Round("SIGSTOP of its process group", 29_700, 0, false),
                new Round("proxy cut", 29_800, 0, false)),
            "");
    Side lock =
        new Side(
            "`consul lock`",
            BesideConsulLock.CONSUL_LOCK_SETTINGS,
            List.of(
                new Round("SIGTERM", 18, 0, false),
                new Round("SIGKILL", 39_700, 20_012, true),
                new Round("SIGSTOP of its process group", 39_800, 0, false)),
            "");

    String md = new BesideConsulLock(List.of(elect, lock)).markdown();

    assertThat(md)
        .contains(
            "## `elect` beside `consul lock`",
            "lease 15 s, renew deadline 10 s",
            "session TTL 15 s, Consul's lock delay 15 s",
            "| SIGTERM | 199 ms | never | 18 ms | never |",
            "| SIGKILL | 29.9 s | never | 39.7 s | **≥ 20.0 s** (the old command still ran",
            "| proxy cut | 29.8 s | never | – | – |");
  }
}
