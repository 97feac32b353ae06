package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.function.Consumer;

/**
 * The task the decider tests decide on: ns/t, uid {@code uid-1}, generation 3, created an hour
 * before their NOW.
 */
final class DecidedTasks {
  private DecidedTasks() {}

  /** The task with the spec {@code spec} writes, as the informer holds it (no status yet). */
  static DelayedTask task(Consumer<DelayedTaskSpec> spec) {
    DelayedTask task = Tasks.task("ns", "t", spec);
    task.setMetadata(
        new ObjectMetaBuilder(task.getMetadata())
            .withUid("uid-1")
            .withGeneration(3L)
            .withCreationTimestamp("2026-12-03T06:00:00Z")
            .build());
    return task;
  }
}
