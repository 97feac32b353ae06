package io.delayedtask.operator.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The order in which waiting reconciles get a thread: claimed first, then by due time, the rest as they came. */
class EarliestDueFirstExecutorTest {
  private static final Instant T = Instant.parse("2026-12-03T07:00:00Z");

  private final Map<ResourceID, Instant> due = new ConcurrentHashMap<>();
  private final List<String> ran = new CopyOnWriteArrayList<>();
  private final EarliestDueFirstExecutor executor = new EarliestDueFirstExecutor(1,
      task -> due.getOrDefault(task, Instant.MAX), r -> r instanceof Reconcile reconcile ? reconcile.task : null);

  /** A reconcile of one task, as JOSDK hands it over. */
  private final class Reconcile implements Runnable {
    final ResourceID task;

    Reconcile(String name) {
      this.task = new ResourceID(name, "ns");
    }

    @Override
    public void run() {
      ran.add(task.getName());
    }
  }

  @AfterEach
  void stop() throws InterruptedException {
    executor.shutdownNow();
    executor.awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void claimedTasksGoFirstThenTasksByDueTimeThenTheRestAsTheyCame() throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    submit("suspended-1", null);
    submit("due-tomorrow", T.plusSeconds(86_400));
    submit("due-in-a-minute", T.plusSeconds(60));
    submit("claimed", EarliestDueFirstExecutor.NOW_DUE);
    submit("suspended-2", null);

    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 5);
    assertThat(ran).containsExactly("claimed", "due-in-a-minute", "due-tomorrow", "suspended-1", "suspended-2");
  }

  @Test
  void aWaitingReconcileWhoseClaimArrivesMovesToTheFront() throws InterruptedException {
    CountDownLatch busy = blockTheOnlyThread();
    submit("due-in-a-minute", T.plusSeconds(60));
    submit("falls-due", T.plusSeconds(3600));
    submit("suspended", null);

    executor.promote(new ResourceID("falls-due", "ns"));
    busy.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> ran.size() == 3);
    assertThat(ran).containsExactly("falls-due", "due-in-a-minute", "suspended");
  }

  @Test
  void theJosdkInUseStillNamesTheTaskOfAReconcileWhereThisReadsIt() {
    assertThat(EarliestDueFirstExecutor.resourceField())
        .as("%s.%s: without it reconciles run first in, first out", EarliestDueFirstExecutor.JOSDK_RUNNABLE,
            EarliestDueFirstExecutor.RESOURCE_FIELD)
        .hasValueSatisfying(field -> assertThat(field.getType()).isEqualTo(ResourceID.class));
  }

  private void submit(String name, Instant dueAt) {
    if (dueAt != null) {
      due.put(new ResourceID(name, "ns"), dueAt);
    }
    executor.execute(new Reconcile(name));
  }

  /** Occupies the executor's one thread until the latch is released. */
  private CountDownLatch blockTheOnlyThread() throws InterruptedException {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    executor.execute(() -> {
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
