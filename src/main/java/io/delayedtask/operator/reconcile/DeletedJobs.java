package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.task.job.TaskLabels;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The last state of the task Jobs deleted lately, as their delete notifications carried it, by name
 * and by the task they belong to. A Job with {@code ttlSecondsAfterFinished: 0} is deleted by the
 * TTL controller right after it completes. When the task's reconcile of that completion runs after
 * the deletion (a busy operator), or when the status write that recorded the Job was lost and the
 * retry comes after it, the Job cache no longer has it: its outcome is read from here instead of
 * reporting the Job gone, or of creating it again. Bounded: the oldest are forgotten first.
 */
final class DeletedJobs {
  static final int CAPACITY = 10_000;

  private final Map<String, Set<ResourceID>> byTaskUid = new HashMap<>();
  private final Map<ResourceID, Job> lastStates =
      new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ResourceID, Job> eldest) {
          if (size() > CAPACITY) {
            unindex(eldest.getKey(), eldest.getValue());
            return true;
          }
          return false;
        }
      };

  synchronized void remember(Job job) {
    ResourceID id = ResourceID.fromResource(job);
    lastStates.put(id, job);
    taskUid(job)
        .ifPresent(uid -> byTaskUid.computeIfAbsent(uid, ignored -> new HashSet<>()).add(id));
  }

  /** The finished ones among the deleted Jobs labelled with this task uid. */
  synchronized List<Job> finishedOf(String taskUid) {
    return byTaskUid.getOrDefault(taskUid, Set.of()).stream()
        .map(lastStates::get)
        .filter(DeletedJobs::finished)
        .toList();
  }

  /**
   * Whether a Job's last state carries its outcome (a true Complete or Failed condition). One
   * deleted before it finished (by hand) has none: its task is Failed, the Job gone.
   */
  static boolean finished(Job job) {
    return job != null
        && job.getStatus() != null
        && job.getStatus().getConditions() != null
        && job.getStatus().getConditions().stream()
            .anyMatch(
                condition ->
                    "True".equals(condition.getStatus())
                        && ("Complete".equals(condition.getType())
                            || "Failed".equals(condition.getType())));
  }

  /** The outcome is recorded: the task no longer needs it. */
  synchronized void forget(String namespace, String name) {
    ResourceID id = new ResourceID(name, namespace);
    Job job = lastStates.remove(id);
    if (job != null) {
      unindex(id, job);
    }
  }

  private void unindex(ResourceID id, Job job) {
    taskUid(job)
        .ifPresent(
            uid -> {
              Set<ResourceID> ids = byTaskUid.get(uid);
              if (ids != null && ids.remove(id) && ids.isEmpty()) {
                byTaskUid.remove(uid);
              }
            });
  }

  private static Optional<String> taskUid(Job job) {
    return Optional.ofNullable(job.getMetadata().getLabels())
        .map(labels -> labels.get(TaskLabels.TASK_UID));
  }
}
