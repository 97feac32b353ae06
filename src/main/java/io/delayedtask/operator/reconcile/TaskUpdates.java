package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.task.status.FireNow;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import java.util.Objects;

/**
 * Which updates of a task reconcile it: a new generation (a spec change; its own status writes do
 * not, as this reconciler sees its own writes), a deletion under way, and a change of the
 * annotation delayedtask.io/fire-now, which changes no generation. JOSDK's generation-aware filter
 * cannot be widened (a filter of one's own is ANDed with it), so this one replaces it.
 */
public final class TaskUpdates implements OnUpdateFilter<DelayedTask> {

  @Override
  public boolean accept(DelayedTask newTask, DelayedTask oldTask) {
    Long before = oldTask.getMetadata().getGeneration();
    Long after = newTask.getMetadata().getGeneration();
    if (before == null || after == null || before < after) {
      return true; // as JOSDK's: an object without a generation (a store without the CRD) always
      // counts
    }
    if (newTask.isMarkedForDeletion()) {
      return true;
    }
    return !Objects.equals(FireNow.annotation(newTask), FireNow.annotation(oldTask));
  }
}
