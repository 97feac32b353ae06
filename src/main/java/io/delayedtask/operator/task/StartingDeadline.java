package io.delayedtask.operator.task;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import java.util.Optional;

/**
 * How late a task may still fire: its own spec.startingDeadlineSeconds, else the operator-wide
 * default (DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS), else no deadline. The default keeps a
 * task re-created from Git long after its runAt (a new uid, so a new firing) from firing old work
 * again: it is Missed instead.
 */
public final class StartingDeadline {
  private final Optional<Long> defaultSeconds;

  public StartingDeadline(Optional<Long> defaultSeconds) {
    this.defaultSeconds = defaultSeconds;
  }

  /** No operator-wide default: only tasks that set their own deadline have one. */
  public static StartingDeadline none() {
    return new StartingDeadline(Optional.empty());
  }

  /** The deadline that applies to this task, in seconds after its due time; empty when it has none. */
  public Optional<Long> secondsFor(DelayedTask task) {
    Long own = task.getSpec() == null ? null : task.getSpec().getStartingDeadlineSeconds();
    return own != null ? Optional.of(own) : defaultSeconds;
  }
}
