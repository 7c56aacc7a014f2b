package dev.baton.election;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SerialExecutorTest {

  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final ExecutorService first = Executors.newSingleThreadExecutor();
  private final ExecutorService second = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() {
    pool.shutdownNow();
    first.shutdownNow();
    second.shutdownNow();
  }

  @Test
  void whatAHoldingThreadQueuesWaitsForItAndRunsOnIt() throws Exception {
    SerialExecutor callbacks = new SerialExecutor(pool);
    List<String> ran = new CopyOnWriteArrayList<>();
    Thread holder =
        holdingOnFirst(
            callbacks,
            () -> {
              callbacks.execute(() -> ran.add("one on " + Thread.currentThread().getName()));
              callbacks.execute(() -> ran.add("two on " + Thread.currentThread().getName()));
              ran.add("held");
            });

    assertThat(ran)
        .containsExactly("held", "one on " + holder.getName(), "two on " + holder.getName());
  }

  @Test
  void overlappingHoldsOfTwoThreadsLeaveNothingBehind() throws Exception {
    SerialExecutor callbacks = new SerialExecutor(pool);
    boolean firstHolds = first.submit(callbacks::hold).get(20, TimeUnit.SECONDS);
    boolean secondHolds = second.submit(callbacks::hold).get(20, TimeUnit.SECONDS);
    first.submit(() -> callbacks.runHeld(firstHolds)).get(20, TimeUnit.SECONDS);
    second.submit(() -> callbacks.runHeld(secondHolds)).get(20, TimeUnit.SECONDS);

    // Neither thread holds any more: what either queues now runs without it.
    CountDownLatch ran = new CountDownLatch(2);
    first.submit(() -> callbacks.execute(ran::countDown)).get(20, TimeUnit.SECONDS);
    second.submit(() -> callbacks.execute(ran::countDown)).get(20, TimeUnit.SECONDS);
    assertThat(ran.await(20, TimeUnit.SECONDS)).as("both tasks ran").isTrue();
  }

  @Test
  void aHoldInsideAHoldLeavesTheQueueToTheOuterOne() throws Exception {
    SerialExecutor callbacks = new SerialExecutor(pool);
    List<String> ran = new CopyOnWriteArrayList<>();
    first
        .submit(
            () -> {
              boolean outer = callbacks.hold();
              boolean inner = callbacks.hold();
              callbacks.execute(() -> ran.add("task"));
              callbacks.runHeld(inner);
              ran.add("inner ended");
              callbacks.runHeld(outer);
            })
        .get(20, TimeUnit.SECONDS);

    assertThat(ran).containsExactly("inner ended", "task");
  }

  @Test
  void aTaskLeftForTheHolderRunsOnItAfterWhatItHeld() throws Exception {
    SerialExecutor callbacks = new SerialExecutor(pool);
    List<String> ran = new CopyOnWriteArrayList<>();
    Thread holder =
        holdingOnFirst(
            callbacks,
            () -> {
              boolean left =
                  callbacks.runAfterHeld(
                      () -> ran.add("after on " + Thread.currentThread().getName()));
              boolean second = callbacks.runAfterHeld(() -> ran.add("second"));
              callbacks.execute(() -> ran.add("held on " + Thread.currentThread().getName()));
              ran.add("left " + left + ", second " + second);
            });
    boolean leftWithoutHold =
        second
            .submit(() -> callbacks.runAfterHeld(() -> ran.add("never")))
            .get(20, TimeUnit.SECONDS);

    assertThat(ran)
        .containsExactly(
            "left true, second true",
            "held on " + holder.getName(),
            "after on " + holder.getName(),
            "second");
    assertThat(leftWithoutHold).as("left by a thread that does not hold").isFalse();
  }

  @Test
  void whatTheExecutorRefusesRunsOnTheFallbackInOrderAndOnTheCallerOnlyWhenThatRefusesToo()
      throws Exception {
    Executor refusing =
        task -> {
          throw new RejectedExecutionException("full");
        };
    SerialExecutor withFallback = new SerialExecutor(refusing, second);
    Thread fallbackThread = second.submit(Thread::currentThread).get(20, TimeUnit.SECONDS);
    List<String> ran = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    first
        .submit(
            () -> {
              withFallback.execute(() -> ran.add("one on " + Thread.currentThread().getName()));
              withFallback.execute(() -> ran.add("two on " + Thread.currentThread().getName()));
              withFallback.execute(done::countDown);
            })
        .get(20, TimeUnit.SECONDS);
    assertThat(done.await(20, TimeUnit.SECONDS)).as("the queue ran").isTrue();

    Executor alsoRefusing =
        task -> {
          throw new RejectedExecutionException("shut down");
        };
    SerialExecutor bothRefuse = new SerialExecutor(refusing, alsoRefusing);
    Thread caller =
        first
            .submit(
                () -> {
                  bothRefuse.execute(() -> ran.add("last on " + Thread.currentThread().getName()));
                  return Thread.currentThread();
                })
            .get(20, TimeUnit.SECONDS);

    assertThat(ran)
        .containsExactly(
            "one on " + fallbackThread.getName(),
            "two on " + fallbackThread.getName(),
            "last on " + caller.getName());
  }

  /**
   * Runs {@code whileHolding} on {@code first} inside a hold of {@code callbacks}, then what the
   * hold kept; the thread it all ran on.
   */
  private Thread holdingOnFirst(SerialExecutor callbacks, Runnable whileHolding) throws Exception {
    return first
        .submit(
            () -> {
              boolean holding = callbacks.hold();
              whileHolding.run();
              callbacks.runHeld(holding);
              return Thread.currentThread();
            })
        .get(20, TimeUnit.SECONDS);
  }
}
