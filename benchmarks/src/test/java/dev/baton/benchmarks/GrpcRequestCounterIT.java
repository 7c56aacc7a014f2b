package dev.baton.benchmarks;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.baton.benchmarks.WireLog.Kind;
import dev.baton.benchmarks.WireLog.Message;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What the interceptor logs of a real etcd's answers and watch events. */
class GrpcRequestCounterIT {

  private static final ByteSequence KEY = ByteSequence.from("/wire/key", UTF_8);

  @Test
  void writesAnswersAndWatchEventsAreLoggedByMethod() throws Exception {
    try (EtcdServer etcd = EtcdServer.start()) {
      String endpoint = "http://127.0.0.1:" + etcd.address().getPort();
      GrpcRequestCounter counter = new GrpcRequestCounter();
      try (Client logged = Client.builder().endpoints(endpoint).interceptor(counter).build();
          Client other = Client.builder().endpoints(endpoint).build()) {
        long start = System.nanoTime();
        long revision =
            logged
                .getKVClient()
                .put(KEY, ByteSequence.from("1", UTF_8))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
        CountDownLatch told = new CountDownLatch(1);
        // From the next revision on, so the watch cannot miss the other client's put.
        try (Watch.Watcher watcher =
            logged
                .getWatchClient()
                .watch(
                    KEY,
                    WatchOption.builder().withRevision(revision + 1).build(),
                    response -> told.countDown())) {
          other.getKVClient().put(KEY, ByteSequence.from("2", UTF_8)).get(30, TimeUnit.SECONDS);
          assertThat(told.await(30, TimeUnit.SECONDS)).isTrue();
        }

        assertThat(counter.log().between(start, System.nanoTime()))
            .usingRecursiveFieldByFieldElementComparatorIgnoringFields("nanos")
            .containsSubsequence(
                new Message(0, Kind.REQUEST, "Put", true),
                new Message(0, Kind.ANSWER, "Put", false),
                new Message(0, Kind.REQUEST, "Watch", false),
                new Message(0, Kind.EVENT, "Watch", false));
        assertThat(counter.messages()).isGreaterThanOrEqualTo(2);
      }
    }
  }
}
