package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.task.job.JobFactory;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The Jobs a decision about one task sees, by name: those the Job cache holds that the task
 * controls, and those it controlled that were deleted after they finished, as their delete
 * notifications left them. A Job the TTL controller deleted right after it completed thus still
 * gives its outcome when the task's reconcile of that completion runs late, and is not created a
 * second time when the status write that recorded it was lost and the firing is retried after the
 * deletion. A Running task's Job found in neither is read live before the decision says it is gone:
 * the two watches (tasks, Jobs) are separate, and right after a start the tasks' can be ahead of
 * the Jobs'. Jobs this process creates go into the cache at once, so the firing path never meets
 * such a miss.
 */
final class TaskJobs {
  private final DeletedJobs deleted = new DeletedJobs();

  /** A delete notification with the Job's final state. */
  void deleted(Job job) {
    deleted.remember(job);
  }

  /** The task's status records the Job's outcome: its last state is no longer needed. */
  void outcomeRecorded(String namespace, String jobName) {
    deleted.forget(namespace, jobName);
  }

  Map<String, Job> of(DelayedTask task, Collection<Job> cached, Function<String, Job> readLive) {
    Map<String, Job> owned = new HashMap<>();
    for (Job job : cached) {
      if (JobFactory.isControlledBy(job, task)) {
        owned.put(job.getMetadata().getName(), job);
      }
    }
    for (Job last : deleted.finishedOf(task.getMetadata().getUid())) {
      if (JobFactory.isControlledBy(last, task)) {
        owned.putIfAbsent(last.getMetadata().getName(), last);
      }
    }
    DelayedTaskStatus status = task.getStatus();
    if (status != null
        && status.getPhase() == Phase.Running
        && status.getJobName() != null
        && !owned.containsKey(status.getJobName())) {
      Job live = readLive.apply(status.getJobName());
      if (live != null && JobFactory.isControlledBy(live, task)) {
        owned.put(live.getMetadata().getName(), live);
      }
    }
    return owned;
  }
}
