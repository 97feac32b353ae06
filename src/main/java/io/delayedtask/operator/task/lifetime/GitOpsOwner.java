package io.delayedtask.operator.task.lifetime;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.Map;
import java.util.Optional;

/**
 * The GitOps tool that manages a task, read from the ownership mark it leaves on the objects it
 * applies. Deleting such a task makes the tool create it again (Argo CD self-heal, Flux at its next
 * interval), and a re-created task is a new task that fires again; so a finished one is kept.
 *
 * @param tool the tool's name as people know it
 * @param mark the annotation or label that says so
 */
public record GitOpsOwner(String tool, String mark) {
  public static final String ARGO_CD_TRACKING_ID = "argocd.argoproj.io/tracking-id";
  public static final String FLUX_KUSTOMIZATION = "kustomize.toolkit.fluxcd.io/name";
  public static final String FLUX_HELM_RELEASE = "helm.toolkit.fluxcd.io/name";

  /** The owner, if the task carries a mark: Argo CD's annotation, or a Flux label. */
  public static Optional<GitOpsOwner> of(DelayedTask task) {
    ObjectMeta metadata = task.getMetadata();
    if (has(metadata.getAnnotations(), ARGO_CD_TRACKING_ID)) {
      return Optional.of(new GitOpsOwner("Argo CD", ARGO_CD_TRACKING_ID));
    }
    if (has(metadata.getLabels(), FLUX_KUSTOMIZATION)) {
      return Optional.of(new GitOpsOwner("Flux", FLUX_KUSTOMIZATION));
    }
    if (has(metadata.getLabels(), FLUX_HELM_RELEASE)) {
      return Optional.of(new GitOpsOwner("Flux", FLUX_HELM_RELEASE));
    }
    return Optional.empty();
  }

  /** Why the task is kept, for Ready's message and the Event. */
  public String keptMessage() {
    return "kept: managed by "
        + tool
        + " ("
        + mark
        + "); deleting it would make "
        + tool
        + " re-create it and fire it again";
  }

  private static boolean has(Map<String, String> values, String key) {
    return values != null && values.get(key) != null;
  }
}
