package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.Tasks;
import io.javaoperatorsdk.operator.processing.MDCUtils;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The order in which waiting reconciles get a thread: claimed tasks first, then delivery outcomes
 * (a few at once) and the rest in arrival order by turns, and never more than a few claimed ones in
 * a row while others wait. Reconciles are submitted the way JOSDK does: with the task in the MDC,
 * put there by JOSDK's own MDCUtils.
 */
class ReconcileExecutorTest {
  private final Set<ResourceID> claimed = ConcurrentHashMap.newKeySet();
  private final Set<ResourceID> outcomes = ConcurrentHashMap.newKeySet();
  private final List<String> ran = new CopyOnWriteArrayList<>();
  private final ReconcileExecutor executor =
      new ReconcileExecutor(1, claimed::contains, outcomes::contains);

  @AfterEach
  void stop() throws InterruptedException {
    executor.shutdownNow();
    executor.awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void claimedTasksGoFirstThenTheRestAsTheyCame() throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    submit("created-1");
    submit("created-2");
    claim("due");
    submit("due");
    submit("created-3");

    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 4);
    assertThat(ran).containsExactly("due", "created-1", "created-2", "created-3");
  }

  @Test
  void aWaitingReconcileWhoseClaimArrivesMovesToTheFront() throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    submit("created-1");
    submit("falls-due");
    submit("created-2");

    claim("falls-due");
    executor.promote(new ResourceID("falls-due", "ns"));
    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 3);
    assertThat(ran).containsExactly("falls-due", "created-1", "created-2");
  }

  @Test
  void aStreamOfClaimsDoesNotStarveTheOtherReconciles() throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    submit("job-finished");
    for (int i = 1; i <= 10; i++) {
      claim("due-" + i);
      submit("due-" + i);
    }

    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 11);
    assertThat(ran.indexOf("job-finished")).isEqualTo(ReconcileLanes.CLAIMS_IN_A_ROW);
  }

  @Test
  void claimedTasksTakeTurnsByNamespaceSoManyDueInOneDoNotHoldAnotherBack()
      throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    for (int i = 1; i <= 3; i++) {
      claim("retry-" + i, "tenant-a");
      submit("retry-" + i, "tenant-a");
    }
    for (int i = 1; i <= 3; i++) {
      claim("retry-" + i, "tenant-b");
      submit("retry-" + i, "tenant-b");
    }
    claim("due", "ninth");
    submit("due", "ninth");

    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 7);
    assertThat(ran)
        .containsExactly(
            "tenant-a/retry-1",
            "tenant-b/retry-1",
            "ninth/due",
            "tenant-a/retry-2",
            "tenant-b/retry-2",
            "tenant-a/retry-3",
            "tenant-b/retry-3");
  }

  @Test
  void outcomesAndOtherReconcilesTakeTurnsAndOutcomesTakeNamespacesInTurn()
      throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    submit("created-1");
    submit("created-2");
    for (int i = 1; i <= 2; i++) {
      outcome("timed-out-" + i, "tenant-a");
      submit("timed-out-" + i, "tenant-a");
    }
    outcome("delivered", "ninth");
    submit("delivered", "ninth");

    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 5);
    assertThat(ran)
        .containsExactly(
            "tenant-a/timed-out-1",
            "created-1",
            "ninth/delivered",
            "created-2",
            "tenant-a/timed-out-2");
  }

  /**
   * A burst of outcomes (hundreds of attempts that timed out together) runs a few at a time: the
   * rest of the threads stay free for due tasks and other work.
   */
  @Test
  void onlyAFewOutcomesRunAtOnceWhateverTheThreadsAndTheRestStillRun() throws InterruptedException {
    ReconcileExecutor wide = new ReconcileExecutor(12, claimed::contains, outcomes::contains);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger outcomesRunning = new AtomicInteger();
    AtomicInteger mostOutcomesAtOnce = new AtomicInteger();
    try {
      for (int i = 0; i < 20; i++) {
        outcome("timed-out-" + i, "tenant-a");
        submitTo(
            wide,
            "timed-out-" + i,
            "tenant-a",
            () -> {
              mostOutcomesAtOnce.accumulateAndGet(outcomesRunning.incrementAndGet(), Math::max);
              awaitQuietly(release);
              outcomesRunning.decrementAndGet();
              ran.add("outcome");
            });
      }
      claim("due", "ninth");
      submitTo(wide, "due", "ninth", () -> ran.add("ninth/due"));
      submitTo(wide, "created", "ns", () -> ran.add("ns/created"));

      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> ran.containsAll(List.of("ninth/due", "ns/created")));
      assertThat(outcomesRunning.get()).isEqualTo(ReconcileLanes.OUTCOMES_AT_ONCE);

      release.countDown();

      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> ran.stream().filter("outcome"::equals).count() == 20);
      assertThat(mostOutcomesAtOnce.get()).isEqualTo(ReconcileLanes.OUTCOMES_AT_ONCE);
    } finally {
      release.countDown();
      wide.shutdownNow();
      wide.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void aWaitingOutcomeWhoseTaskIsClaimedMovesToTheClaimedLane() throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    submit("created");
    outcome("answered", "ns");
    submit("answered");

    claim("answered");
    executor.promote(new ResourceID("answered", "ns"));
    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 2);
    assertThat(ran).containsExactly("answered", "created");
  }

  @Test
  void aReconcileSubmittedWithoutItsTaskInTheMdcWaitsInArrivalOrder() throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    submit("created");
    claim("unnamed");
    executor.execute(() -> ran.add("unnamed"));

    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 2);
    assertThat(ran).containsExactly("created", "unnamed");
  }

  @Test
  void whileTheScheduleIsRebuiltOnlyClaimedReconcilesRun() {
    CompletableFuture<Void> scheduleReady = new CompletableFuture<>();
    executor.holdOthersUntil(scheduleReady, Duration.ofMinutes(1));
    submit("created");
    claim("due");
    submit("due");

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.contains("due"));
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(5))
        .until(() -> !ran.contains("created"));

    scheduleReady.complete(null);

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.contains("created"));
    assertThat(ran).containsExactly("due", "created");
  }

  @Test
  void theHoldEndsAfterItsBoundIfTheScheduleIsNeverReady() {
    executor.holdOthersUntil(new CompletableFuture<>(), Duration.ofMillis(300));
    Instant submitted = Instant.now();
    submit("created");

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.contains("created"));
    assertThat(Duration.between(submitted, Instant.now()))
        .isGreaterThanOrEqualTo(Duration.ofMillis(250));
  }

  private void claim(String name) {
    claim(name, "ns");
  }

  private void claim(String name, String namespace) {
    claimed.add(new ResourceID(name, namespace));
  }

  private void outcome(String name, String namespace) {
    outcomes.add(new ResourceID(name, namespace));
  }

  private static void submitTo(
      ReconcileExecutor target, String name, String namespace, Runnable reconcile) {
    DelayedTask task = Tasks.statusOnly(namespace, name, Instant.parse("2026-12-03T07:00:00Z"));
    MDCUtils.addResourceInfo(task);
    try {
      target.execute(reconcile);
    } finally {
      MDCUtils.removeResourceInfo();
    }
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** As JOSDK's EventProcessor submits: MDCUtils.addResourceInfo, execute, removeResourceInfo. */
  private void submit(String name) {
    submit(name, "ns", name);
  }

  private void submit(String name, String namespace) {
    submit(name, namespace, namespace + "/" + name);
  }

  private void submit(String name, String namespace, String recordedAs) {
    submitTo(executor, name, namespace, () -> ran.add(recordedAs));
  }

  /** Occupies the executor's one thread until the latch is released. */
  private CountDownLatch blockTheOnlyThread() throws InterruptedException {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    executor.execute(
        () -> {
          started.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    return release;
  }
}
