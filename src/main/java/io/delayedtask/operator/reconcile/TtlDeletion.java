package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Deletes a finished task whose ttlSecondsAfterFinished has passed, on the condition that it is
 * still the object the decision was made from: the delete carries that object's resourceVersion as
 * a precondition. A task re-created under the same name has another resourceVersion (they are never
 * reused, whatever the uid), as has one changed since, so an old decision deletes neither.
 */
final class TtlDeletion {
  enum Result {
    DELETED,
    /** The precondition failed (409): the task changed or was re-created; decide again. */
    CHANGED
  }

  private TtlDeletion() {}

  static Result delete(KubernetesClient client, DelayedTask decidedOn) {
    try {
      client
          .resources(DelayedTask.class)
          .inNamespace(decidedOn.getMetadata().getNamespace())
          .withName(decidedOn.getMetadata().getName())
          .lockResourceVersion(decidedOn.getMetadata().getResourceVersion())
          .delete();
      return Result.DELETED;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return Result.CHANGED;
      }
      throw e;
    }
  }
}
