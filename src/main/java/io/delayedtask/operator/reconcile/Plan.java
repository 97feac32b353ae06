package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.decision.ClaimVerdict;
import io.delayedtask.operator.decision.DeliveryCount;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.decision.TaskEvent;
import io.delayedtask.operator.sink.DeliveryAttempt;
import io.delayedtask.operator.sink.DeliveryOutcomes;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one reconcile does (its parts in the vocabulary of {@code decision/}), decided by {@link
 * TaskDecider} before any request is made, and carried out by {@link DelayedTaskReconciler} in this
 * order: the schedule entry, the Job, the status, then (once the status is written) the Events and
 * the claim.
 *
 * @param schedule the Redis entry: leave it, write it for a due time, or remove it
 * @param jobToCreate the Job to create now; the status and the claim then follow from how that
 *     went: the caller decides again with the API server's answer among the facts ({@link
 *     TaskFacts#withJobCreation})
 * @param status the status the task should have; written only when it differs from the current one
 * @param events recorded once the status is written, so a retried decision never doubles them
 * @param claim what becomes of the schedule claim this reconcile was woken by, if any
 * @param requeue reconcile again after this long (a finished task's TTL)
 * @param deleteTask the task's TTL has passed: delete it
 * @param delivery a sink delivery attempt to send now (without waiting: its outcome comes back
 *     through {@link DeliveryOutcomes} and is recorded by a later reconcile)
 * @param deliveryMetric how the recorded delivery attempt counts on /metrics, if one was recorded
 * @param jobToCheck a Job task being scheduled for a new generation: dry-run the creation of this
 *     Job ({@code dryRun=All}) and decide again with the answer ({@link TaskFacts#withJobCheck}); a
 *     plan that names one has no other effect
 */
public record Plan(
    ScheduleChange schedule,
    Optional<Job> jobToCreate,
    DelayedTaskStatus status,
    List<TaskEvent> events,
    Optional<ClaimVerdict> claim,
    Optional<Duration> requeue,
    boolean deleteTask,
    Optional<DeliveryAttempt> delivery,
    Optional<DeliveryCount> deliveryMetric,
    Optional<Job> jobToCheck) {

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
}
