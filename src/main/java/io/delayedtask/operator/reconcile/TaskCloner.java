package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.javaoperatorsdk.operator.api.config.Cloner;

/**
 * JOSDK's resource cloner (it copies the cached task before each reconcile) by a serialization
 * round trip, as JOSDK's own does, keeping what that round trip loses: which spec fields could not
 * be read (api.v1alpha1.LenientDeserializer), so the copy of an Invalid task stays Invalid.
 */
public final class TaskCloner implements Cloner {
  private final KubernetesSerialization serialization;

  public TaskCloner(KubernetesSerialization serialization) {
    this.serialization = serialization;
  }

  @Override
  public <R extends HasMetadata> R clone(R object) {
    R copy = serialization.clone(object);
    if (object instanceof DelayedTask original
        && copy instanceof DelayedTask task
        && original.getSpec() != null
        && task.getSpec() != null) {
      task.getSpec().keepUnreadableOf(original.getSpec());
    }
    return copy;
  }
}
