package dev.baton.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WalFsyncsTest {

  private static String metrics(long fast, long slow, long count, double sum) {
    return String.join(
        "\n",
        "# HELP etcd_disk_wal_fsync_duration_seconds The latency distributions of fsync called by WAL.",
        "# TYPE etcd_disk_wal_fsync_duration_seconds histogram",
        "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} " + fast,
        "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.002\"} " + slow,
        "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} " + count,
        "etcd_disk_wal_fsync_duration_seconds_sum " + sum,
        "etcd_disk_wal_fsync_duration_seconds_count " + count,
        "etcd_disk_backend_commit_duration_seconds_count 999");
  }

  @Test
  void theFsyncsBetweenTwoReadingsAreTheirDifference() {
    EtcdServer.WalFsyncs before = EtcdServer.WalFsyncs.parse(metrics(10, 10, 10, 0.005));
    EtcdServer.WalFsyncs after = EtcdServer.WalFsyncs.parse(metrics(12, 30, 30, 0.035));

    EtcdServer.WalFsyncs during = after.since(before);

    assertThat(during.count()).isEqualTo(20);
    assertThat(during.describe()).contains("20 fsyncs, mean 1.5 ms, half of them within 2.0 ms");
  }

  @Test
  void noFsyncsDescribeNothing() {
    EtcdServer.WalFsyncs same = EtcdServer.WalFsyncs.parse(metrics(1, 1, 1, 0.001));

    assertThat(same.since(same).describe()).isEmpty();
  }
}
