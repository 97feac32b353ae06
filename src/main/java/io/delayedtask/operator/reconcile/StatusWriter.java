package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Objects;

/**
 * Writes a task's status the way JOSDK's {@code PrimaryUpdateAndCacheUtils} does, minus its
 * re-read-and-retry loop: one PUT of the status subresource carrying the resourceVersion the
 * decision was made from (the API server refuses it with 409 if the task changed since), and the
 * answer put into JOSDK's cache overlay, so that the next reconcile of this task sees its own write
 * without reading the task from the API server.
 *
 * <p>On a conflict nothing is retried here: the caller decides again from a fresh copy, because
 * what changed may change the decision (a firing that another writer already recorded, a new due
 * time).
 */
final class StatusWriter {

  enum Result {
    /** The status was written (or already was the desired one). */
    WRITTEN,
    /** The task changed since it was read: decide again from a fresh copy. */
    CONFLICT,
    /** The task is gone. */
    GONE
  }

  /** Writes {@code desired} unless it equals the task's status. Other API errors are thrown. */
  Result write(DelayedTask task, DelayedTaskStatus desired, Context<DelayedTask> context) {
    if (Objects.equals(desired, task.getStatus())) {
      return Result.WRITTEN;
    }
    DelayedTaskStatus before = task.getStatus();
    task.setStatus(desired);
    try {
      DelayedTask written = context.getClient().resource(task).updateStatus();
      context
          .eventSourceRetriever()
          .getControllerEventSource()
          .handleRecentResourceUpdate(ResourceID.fromResource(task), written, task);
      return Result.WRITTEN;
    } catch (KubernetesClientException e) {
      task.setStatus(before);
      if (e.getCode() == 409) {
        return Result.CONFLICT;
      }
      if (e.getCode() == 404) {
        return Result.GONE;
      }
      throw e;
    }
  }
}
