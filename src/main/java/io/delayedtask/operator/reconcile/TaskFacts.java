package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything one decision reads, gathered by the reconciler from JOSDK's caches: the task, its Jobs
 * by name, the schedule claim waiting for it (when the leader's poller found it due), the time, and
 * for a sink task the outcome of its last delivery attempt (waiting to be recorded) and whether a
 * request is still in flight.
 */
public record TaskFacts(DelayedTask task, Map<String, Job> jobs, Optional<ClaimedEntry> claim, Instant now,
    Optional<DeliveryOutcome> delivery, boolean deliveryInFlight) {
  public TaskFacts {
    Objects.requireNonNull(task, "task");
    jobs = Map.copyOf(jobs);
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(delivery, "delivery");
  }

  /** Facts of a task without a delivery in progress. */
  public TaskFacts(DelayedTask task, Map<String, Job> jobs, Optional<ClaimedEntry> claim, Instant now) {
    this(task, jobs, claim, now, Optional.empty(), false);
  }
}
