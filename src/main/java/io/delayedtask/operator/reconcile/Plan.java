package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.sink.DeliveryAttempt;
import io.delayedtask.operator.sink.DeliveryOutcomes;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one reconcile does, decided by {@link TaskDecider} before any request is made, and carried
 * out by {@link DelayedTaskReconciler} in this order: the schedule entry, the Job, the status, then
 * (once the status is written) the Events and the claim.
 *
 * @param schedule    the Redis entry: leave it, write it for a due time, or remove it
 * @param jobToCreate the Job to create now; the status and the claim then follow from how that went:
 *                    the caller decides again with the API server's answer among the facts
 *                    ({@link TaskFacts#withJobCreation})
 * @param status      the status the task should have; written only when it differs from the current one
 * @param events      recorded once the status is written, so a retried decision never doubles them
 * @param claim       what becomes of the schedule claim this reconcile was woken by, if any
 * @param requeue     reconcile again after this long (a finished task's TTL)
 * @param deleteTask  the task's TTL has passed: delete it
 * @param delivery    a sink delivery attempt to send now (without waiting: its outcome comes back
 *                    through {@link DeliveryOutcomes} and is recorded by a later reconcile)
 * @param deliveryMetric how the recorded delivery attempt counts on /metrics, if one was recorded
 * @param jobToCheck  a Job task being scheduled for a new generation: dry-run the creation of this
 *                    Job ({@code dryRun=All}) and decide again with the answer
 *                    ({@link TaskFacts#withJobCheck}); a plan that names one has no other effect
 */
public record Plan(ScheduleChange schedule, Optional<Job> jobToCreate, DelayedTaskStatus status,
    List<TaskEvent> events, Optional<ClaimVerdict> claim, Optional<Duration> requeue, boolean deleteTask,
    Optional<DeliveryAttempt> delivery, Optional<FireMetrics.Delivery> deliveryMetric, Optional<Job> jobToCheck) {

  public Plan {
    Objects.requireNonNull(schedule, "schedule");
    Objects.requireNonNull(jobToCreate, "jobToCreate");
    Objects.requireNonNull(status, "status");
    events = List.copyOf(events);
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(requeue, "requeue");
    Objects.requireNonNull(delivery, "delivery");
    Objects.requireNonNull(deliveryMetric, "deliveryMetric");
    Objects.requireNonNull(jobToCheck, "jobToCheck");
  }

  /** The Redis entry of the task. */
  public sealed interface ScheduleChange {
    /** The entry is as it should be (or a claim will put it right when it is settled). */
    record Keep() implements ScheduleChange {}

    /** Add the entry, or move it to this due time. */
    record Write(Instant due) implements ScheduleChange {}

    /** Remove the entry, waiting or claimed. */
    record Remove() implements ScheduleChange {}

    ScheduleChange KEEP = new Keep();
    ScheduleChange REMOVE = new Remove();
  }

  /** A core/v1 Event on the task. */
  public record TaskEvent(boolean warning, String reason, String message) {
    public static TaskEvent normal(String reason, String message) {
      return new TaskEvent(false, reason, message);
    }

    public static TaskEvent warning(String reason, String message) {
      return new TaskEvent(true, reason, message);
    }
  }

  /** What becomes of the claim; each carries the outcome /metrics counts it as (none: not counted). */
  public sealed interface ClaimVerdict {
    /**
     * Done with this due time (fired, missed, failed) or the claim is stale: acknowledge it. {@code
     * lag}: from the due time to the claim that fired it, when this firing did.
     */
    record Settle(FireMetrics.Outcome outcome, Optional<Duration> lag) implements ClaimVerdict {
      public static Settle stale() {
        return new Settle(FireMetrics.Outcome.STALE, Optional.empty());
      }

      public static Settle as(FireMetrics.Outcome outcome) {
        return new Settle(outcome, Optional.empty());
      }

      public static Settle fired(FireMetrics.Outcome outcome, Instant due, Instant claimedAt) {
        return new Settle(outcome, Optional.of(Duration.between(due, claimedAt)));
      }
    }

    /** Not yet: put it back to wait until {@code at} (the due time moved, or the clocks disagree). */
    record HandBack(Instant at, Optional<FireMetrics.Outcome> outcome) implements ClaimVerdict {}

    /** A transient failure: put it back with exponential backoff. */
    record Backoff(String why) implements ClaimVerdict {}
  }
}
