package io.delayedtask.operator.task;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import java.time.Instant;
import java.util.Optional;

/**
 * The one rule the reconciler and the resync share: does this task wait to fire, and
 * for which due time?
 */
public final class TaskState {
  private TaskState() {}

  /**
   * True when the status says the task already fired (or finished) for this due time. A firedTime
   * says so on its own: a phase this version cannot read (a store without the CRD's schema) is
   * dropped when the task is read, and must not make a fired task fire again.
   */
  public static boolean handledFor(DelayedTaskStatus status, Instant due) {
    if (status == null) {
      return false;
    }
    Phase phase = status.getPhase();
    boolean afterFiring = status.getFiredTime() != null
        || (phase != null && (phase == Phase.Running || phase.isFinished()));
    return afterFiring && Times.format(due).equals(status.getDueTime());
  }

  /** The due time the task waits for, or empty when it is invalid, suspended or already handled. */
  public static Optional<Instant> waitingDue(DelayedTask task, SpecValidator validator) {
    if (!(validator.validate(task) instanceof Validation.Valid valid)) {
      return Optional.empty();
    }
    if (task.getSpec().isSuspended() || handledFor(task.getStatus(), valid.due())) {
      return Optional.empty();
    }
    return Optional.of(valid.due());
  }
}
