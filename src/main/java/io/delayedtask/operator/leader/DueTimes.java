package io.delayedtask.operator.leader;

import io.delayedtask.operator.task.SpecValidator;
import io.delayedtask.operator.task.TaskState;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Instant;
import java.util.function.Function;

/**
 * When each task falls due, as {@link EarliestDueFirstExecutor} orders reconciles by: now for a task
 * the leader has claimed, its due time for one that waits for it (from the cache), and never for
 * the rest (suspended, invalid, already fired).
 */
public final class DueTimes implements Function<ResourceID, Instant> {
  private final DueClaims claims;
  private final TaskCache tasks;
  private final SpecValidator validator;

  public DueTimes(DueClaims claims, TaskCache tasks, SpecValidator validator) {
    this.claims = claims;
    this.tasks = tasks;
    this.validator = validator;
  }

  @Override
  public Instant apply(ResourceID task) {
    if (claims.holdsClaim(task)) {
      return EarliestDueFirstExecutor.NOW_DUE;
    }
    return tasks.get(task.getNamespace().orElse(null), task.getName())
        .flatMap(cached -> TaskState.waitingDue(cached, validator))
        .orElse(Instant.MAX);
  }
}
