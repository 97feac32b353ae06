package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.QueueHold;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.lifetime.SecondsSetting;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.status.Conditions;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The condition Queued, decided as {@link TaskDeciderTest} decides the rest: a held task stays
 * Scheduled and Ready with Queued=True and its reason, once per reason; firing takes it away.
 */
class QueuedDecisionsTest {
  private static final Instant NOW = Instant.parse("2026-12-03T07:00:00Z");
  private static final QueueRef EMAILS = new QueueRef("ns", "emails");

  private final TaskDecider decider =
      new TaskDecider(
          new SpecValidator(SinkSpecRules.defaults()),
          SecondsSetting.finishedTtl(Optional.empty()));

  @Test
  void aHeldTaskIsScheduledReadyAndQueuedWithItsReasonUntilItsClaimFiresIt() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(NOW.minusSeconds(1).toString());
                  s.setQueue("emails");
                }));

    Plan held = decide(task, Optional.empty(), hold(task, QueueHold.QUEUE_PAUSED));
    assertThat(held.status().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(held.schedule()).isEqualTo(ScheduleChange.KEEP);
    assertThat(Conditions.find(held.status(), Condition.QUEUED))
        .get()
        .satisfies(
            queued -> {
              assertThat(queued.getStatus()).isEqualTo("True");
              assertThat(queued.getReason()).isEqualTo("QueuePaused");
              assertThat(queued.getMessage()).contains("DelayedTaskQueue emails is paused");
            });
    assertThat(Conditions.find(held.status(), Condition.READY))
        .get()
        .extracting(Condition::getStatus)
        .isEqualTo("True");
    task.setStatus(held.status());

    Plan again = decide(task, Optional.empty(), hold(task, QueueHold.QUEUE_PAUSED));
    assertThat(again.status()).as("once per reason: nothing to write").isEqualTo(task.getStatus());
    assertThat(again.events()).isEmpty();

    Plan limited = decide(task, Optional.empty(), hold(task, QueueHold.RATE_LIMITED));
    assertThat(Conditions.find(limited.status(), Condition.QUEUED))
        .get()
        .extracting(Condition::getReason)
        .isEqualTo("RateLimited");
    task.setStatus(limited.status());

    ClaimedEntry claim =
        new ClaimedEntry(
            ScheduleIds.idOf(task),
            NOW.minusSeconds(1),
            NOW,
            "op:q:ns/emails:1",
            System.nanoTime(),
            Optional.of(EMAILS));
    Plan fired = decide(task, Optional.of(claim), Optional.empty());
    assertThat(fired.status().getPhase()).isEqualTo(Phase.Fired);
    assertThat(Conditions.find(fired.status(), Condition.QUEUED))
        .as("its queue let it go")
        .isEmpty();
  }

  @Test
  void aHoldOfAnotherQueueOrOfNoneIsNotShown() {
    DelayedTask unqueued = scheduled(task(s -> s.setRunAt(NOW.minusSeconds(1).toString())));
    Plan plan =
        decide(
            unqueued,
            Optional.empty(),
            Optional.of(new QueueHold(ScheduleIds.idOf(unqueued), EMAILS, QueueHold.QUEUE_PAUSED)));
    assertThat(Conditions.find(plan.status(), Condition.QUEUED)).isEmpty();

    DelayedTask moved =
        scheduled(
            task(
                s -> {
                  s.setRunAt(NOW.minusSeconds(1).toString());
                  s.setQueue("invoices");
                }));
    Plan other = decide(moved, Optional.empty(), hold(moved, QueueHold.QUEUE_MISSING));
    assertThat(Conditions.find(other.status(), Condition.QUEUED))
        .as("the hold names emails, the task invoices")
        .isEmpty();
  }

  private static Optional<QueueHold> hold(DelayedTask task, String reason) {
    return Optional.of(new QueueHold(ScheduleIds.idOf(task), EMAILS, reason));
  }

  private Plan decide(DelayedTask task, Optional<ClaimedEntry> claim, Optional<QueueHold> hold) {
    return decider.decide(new TaskFacts(task, Map.of(), claim, NOW).withQueueHold(hold));
  }

  private DelayedTask scheduled(DelayedTask task) {
    Plan plan = decider.decide(new TaskFacts(task, Map.of(), Optional.empty(), NOW));
    DelayedTaskStatus status = plan.status();
    task.setStatus(status);
    return task;
  }

  private static DelayedTask task(Consumer<DelayedTaskSpec> spec) {
    DelayedTask task = Tasks.task("ns", "t", spec);
    task.setMetadata(
        new ObjectMetaBuilder(task.getMetadata())
            .withUid("uid-1")
            .withGeneration(3L)
            .withCreationTimestamp("2026-12-03T06:00:00Z")
            .build());
    return task;
  }
}
