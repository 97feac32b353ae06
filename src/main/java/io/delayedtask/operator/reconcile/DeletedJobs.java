package io.delayedtask.operator.reconcile;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The last state of the task Jobs deleted lately, as their delete notifications carried it. A Job
 * with {@code ttlSecondsAfterFinished: 0} is deleted by the TTL controller right after it
 * completes; when the task's reconcile of that completion runs after the deletion (a busy
 * operator), the Job cache no longer has it, and its outcome is read from here instead of
 * reporting the Job gone. Bounded: the oldest are forgotten first.
 */
final class DeletedJobs {
  static final int CAPACITY = 10_000;

  private final Map<ResourceID, Job> lastStates = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<ResourceID, Job> eldest) {
      return size() > CAPACITY;
    }
  };

  synchronized void remember(Job job) {
    lastStates.put(ResourceID.fromResource(job), job);
  }

  synchronized Optional<Job> lastState(String namespace, String name) {
    return Optional.ofNullable(lastStates.get(new ResourceID(name, namespace)));
  }

  /**
   * Whether a Job's last state carries its outcome (a true Complete or Failed condition). One
   * deleted before it finished (by hand) has none: its task is Failed, the Job gone.
   */
  static boolean finished(Job job) {
    return job.getStatus() != null && job.getStatus().getConditions() != null
        && job.getStatus().getConditions().stream().anyMatch(condition -> "True".equals(condition.getStatus())
            && ("Complete".equals(condition.getType()) || "Failed".equals(condition.getType())));
  }

  /** The outcome is recorded: the task no longer needs it. */
  synchronized void forget(String namespace, String name) {
    lastStates.remove(new ResourceID(name, namespace));
  }
}
