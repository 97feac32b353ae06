package io.delayedtask.operator.task.status;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.spec.Validation;
import io.delayedtask.operator.task.time.Times;
import java.time.Instant;
import java.util.Optional;

/**
 * The one rule the reconciler and the resync share: does this task wait to fire, and for which due
 * time?
 */
public final class TaskState {
  /**
   * The reason of the Scheduled condition of a Job task whose template the API server refused in a
   * dry run of the Job's creation: it stays Invalid until its spec changes.
   */
  public static final String JOB_TEMPLATE_REFUSED = "JobTemplateRefused";

  private TaskState() {}

  /**
   * True when the status says the API server refused this generation's jobTemplate (a dry run when
   * it was scheduled): nothing the operator checks itself would find it, so the status is the
   * record.
   */
  public static boolean jobTemplateRefused(DelayedTask task) {
    DelayedTaskStatus status = task.getStatus();
    Long generation = task.getMetadata() == null ? null : task.getMetadata().getGeneration();
    return status != null
        && status.getPhase() == Phase.Invalid
        && generation != null
        && generation.equals(status.getObservedGeneration())
        && Conditions.find(status, io.delayedtask.operator.api.v1alpha1.Condition.SCHEDULED)
            .map(c -> JOB_TEMPLATE_REFUSED.equals(c.getReason()))
            .orElse(false);
  }

  /**
   * True when the status says the task already fired (or finished) for this due time. A firedTime
   * says so on its own: a phase this version cannot read (a store without the CRD's schema) is
   * dropped when the task is read, and must not make a fired task fire again.
   */
  public static boolean handledFor(DelayedTaskStatus status, Instant due) {
    if (status == null || nextAttempt(status).isPresent()) {
      return false;
    }
    Phase phase = status.getPhase();
    boolean afterFiring =
        status.getFiredTime() != null
            || (phase != null && (phase == Phase.Running || phase.isFinished()));
    return afterFiring && Times.format(due).equals(status.getDueTime());
  }

  /**
   * When a sink task's next delivery attempt is due (a retry, or the dead-letter sink's turn), as
   * its status records it; empty when no attempt waits.
   */
  public static Optional<Instant> nextAttempt(DelayedTaskStatus status) {
    if (status == null || status.getDelivery() == null) {
      return Optional.empty();
    }
    return Optional.ofNullable(Times.parseOrNull(status.getDelivery().getNextAttemptTime()));
  }

  /**
   * When the task's schedule entry should be due, or empty when it is invalid (its jobTemplate
   * refused included), suspended or already handled: its due time, or for a sink task whose retry
   * waits, that retry's time; with a fire-now not yet acted on, the fire-now's time (suspended or
   * not).
   */
  public static Optional<Instant> waitingDue(DelayedTask task, SpecValidator validator) {
    if (!(validator.validate(task) instanceof Validation.Valid valid) || jobTemplateRefused(task)) {
      return Optional.empty();
    }
    Optional<FireNow.Request> fireNow = FireNow.pending(task);
    if (fireNow.isPresent()
        && fireNow.get() instanceof FireNow.Request.At at
        && !FireNow.firedFor(task.getStatus(), valid.due())) {
      return Optional.of(at.due()); // fires at once, suspended or not
    }
    if (task.getSpec().isSuspended() || handledFor(task.getStatus(), valid.due())) {
      return Optional.empty();
    }
    DelayedTaskStatus status = task.getStatus();
    boolean sameDue = status != null && Times.format(valid.due()).equals(status.getDueTime());
    return sameDue
        ? nextAttempt(status).or(() -> Optional.of(valid.due()))
        : Optional.of(valid.due());
  }
}
