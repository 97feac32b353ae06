package io.delayedtask.operator.task;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import java.util.Optional;

/**
 * How long a finished task stays: its own spec.ttlSecondsAfterFinished, else the operator-wide
 * default (DELAYEDTASK_FINISHED_TTL_SECONDS), else for ever. Whether a GitOps-managed task may be
 * deleted at all is {@link GitOpsOwner}'s question, not this one's.
 */
public final class FinishedTtl {
  private final Optional<Long> defaultSeconds;

  public FinishedTtl(Optional<Long> defaultSeconds) {
    this.defaultSeconds = defaultSeconds;
  }

  /** No operator-wide default: only tasks that set their own TTL are deleted. */
  public static FinishedTtl none() {
    return new FinishedTtl(Optional.empty());
  }

  /** The TTL that applies to this task, in seconds; empty when it is kept for ever. */
  public Optional<Long> secondsFor(DelayedTask task) {
    Long own = task.getSpec() == null ? null : task.getSpec().getTtlSecondsAfterFinished();
    return own != null ? Optional.of(own) : defaultSeconds;
  }
}
