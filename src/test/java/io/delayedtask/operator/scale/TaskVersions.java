package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;

/** A harness watch that looks at every version of a task it sees; deletions do not matter to it. */
abstract class TaskVersions implements ResourceEventHandler<DelayedTask> {

  /** Called with each version of a task, the first one included. */
  abstract void record(DelayedTask task);

  @Override
  public final void onAdd(DelayedTask task) {
    record(task);
  }

  @Override
  public final void onUpdate(DelayedTask old, DelayedTask task) {
    record(task);
  }

  @Override
  public final void onDelete(DelayedTask task, boolean deletedFinalStateUnknown) {}
}
