package io.delayedtask.operator.task.lifetime;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import java.util.Optional;
import java.util.function.Function;

/**
 * A setting in seconds that a task may set in its spec and the operator may default: the task's own
 * value, else the operator-wide default, else none.
 *
 * <ul>
 *   <li>{@link #finishedTtl}: how long a finished task stays (spec.ttlSecondsAfterFinished,
 *       DELAYEDTASK_FINISHED_TTL_SECONDS); none means kept for ever. Whether a GitOps-managed task
 *       may be deleted at all is {@link GitOpsOwner}'s question, not this one's.
 *   <li>{@link #startingDeadline}: how late after its due time a task may still fire
 *       (spec.startingDeadlineSeconds, DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS); none means
 *       no deadline. The default keeps a task re-created from Git long after its runAt (a new uid,
 *       so a new firing) from firing old work again: it is Missed instead.
 * </ul>
 */
public final class SecondsSetting {
  private final Function<DelayedTaskSpec, Long> ownSeconds;
  private final Optional<Long> defaultSeconds;

  private SecondsSetting(
      Function<DelayedTaskSpec, Long> ownSeconds, Optional<Long> defaultSeconds) {
    this.ownSeconds = ownSeconds;
    this.defaultSeconds = defaultSeconds;
  }

  /** How long a finished task stays; {@code defaultSeconds} applies to tasks that set no TTL. */
  public static SecondsSetting finishedTtl(Optional<Long> defaultSeconds) {
    return new SecondsSetting(DelayedTaskSpec::getTtlSecondsAfterFinished, defaultSeconds);
  }

  /** How late a task may fire; {@code defaultSeconds} applies to tasks that set no deadline. */
  public static SecondsSetting startingDeadline(Optional<Long> defaultSeconds) {
    return new SecondsSetting(DelayedTaskSpec::getStartingDeadlineSeconds, defaultSeconds);
  }

  /** The seconds that apply to this task; empty when neither it nor the operator sets any. */
  public Optional<Long> secondsFor(DelayedTask task) {
    Long own = task.getSpec() == null ? null : ownSeconds.apply(task.getSpec());
    return own != null ? Optional.of(own) : defaultSeconds;
  }
}
