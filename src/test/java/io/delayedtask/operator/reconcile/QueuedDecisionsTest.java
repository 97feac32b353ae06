package io.delayedtask.operator.reconcile;

import static io.delayedtask.operator.reconcile.ClaimBuilder.claimOf;
import static io.delayedtask.operator.reconcile.DecidedTasks.task;
import static io.delayedtask.operator.reconcile.DeciderBuilder.taskDecider;
import static io.delayedtask.operator.reconcile.FactsBuilder.factsOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.QueueHold;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.task.status.Conditions;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The condition Queued, decided as {@link TaskDeciderTest} decides the rest: a held task stays
 * Scheduled and Ready with Queued=True and its reason, once per reason; firing takes it away.
 */
class QueuedDecisionsTest {
  private static final Instant NOW = Instant.parse("2026-12-03T07:00:00Z");
  private static final QueueRef EMAILS = new QueueRef("ns", "emails");

  private final TaskDecider decider = taskDecider().build();

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
        claimOf(task)
            .due(NOW.minusSeconds(1))
            .claimedAt(NOW)
            .inQueue(EMAILS, "op:q:ns/emails:1")
            .build();
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
    return decider.decide(factsOf(task, NOW).claim(claim).build().withQueueHold(hold));
  }

  private DelayedTask scheduled(DelayedTask task) {
    Plan plan = decider.decide(factsOf(task, NOW).build());
    DelayedTaskStatus status = plan.status();
    task.setStatus(status);
    return task;
  }
}
