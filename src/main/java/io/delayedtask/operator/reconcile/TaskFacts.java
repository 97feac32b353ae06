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
 * by name, the schedule claim waiting for it (when the leader's poller found it due), and the time.
 */
public record TaskFacts(DelayedTask task, Map<String, Job> jobs, Optional<ClaimedEntry> claim, Instant now) {
  public TaskFacts {
    Objects.requireNonNull(task, "task");
    jobs = Map.copyOf(jobs);
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(now, "now");
  }
}
