package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.task.status.FireNow;
import java.util.Optional;

/**
 * Where a task's schedule entry waits: in the key group of the queue its spec names, or in its
 * shard. A fire-now not yet handled bypasses the queue (docs/reference.md, "Firing now": pause and
 * limits do not hold it), so its entry goes to the shard.
 */
public final class TaskQueues {
  private TaskQueues() {}

  /** The queue the task names in spec.queue. */
  public static Optional<QueueRef> named(DelayedTask task) {
    if (task.getSpec() == null) {
      return Optional.empty();
    }
    try {
      return QueueRef.of(task.getMetadata().getNamespace(), task.getSpec().getQueue());
    } catch (IllegalArgumentException e) {
      return Optional
          .empty(); // not a DNS label: the API server's schema refuses it, the validator reports it
    }
  }

  /** The queue whose group the task's entry is written into; empty for its shard. */
  public static Optional<QueueRef> placement(DelayedTask task) {
    boolean firingNow =
        FireNow.pending(task).filter(request -> request instanceof FireNow.Request.At).isPresent();
    return firingNow ? Optional.empty() : named(task);
  }
}
