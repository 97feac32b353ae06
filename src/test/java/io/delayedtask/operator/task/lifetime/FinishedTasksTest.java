package io.delayedtask.operator.task.lifetime;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Which TTL a finished task has, which starting deadline a task has, and which tasks a GitOps tool
 * owns (and so are never deleted).
 */
class FinishedTasksTest {

  @Test
  void theOperatorDefaultAppliesToATaskWithoutItsOwnTtl() {
    assertThat(
            SecondsSetting.finishedTtl(Optional.of(600L))
                .secondsFor(task(null, Map.of(), Map.of())))
        .contains(600L);
  }

  @Test
  void aTasksOwnTtlWinsOverTheDefault() {
    assertThat(
            SecondsSetting.finishedTtl(Optional.of(600L)).secondsFor(task(5L, Map.of(), Map.of())))
        .contains(5L);
    assertThat(
            SecondsSetting.finishedTtl(Optional.of(600L)).secondsFor(task(0L, Map.of(), Map.of())))
        .contains(0L);
  }

  @Test
  void withoutDefaultOnlyATasksOwnTtlApplies() {
    assertThat(
            SecondsSetting.finishedTtl(Optional.empty()).secondsFor(task(null, Map.of(), Map.of())))
        .isEmpty();
    assertThat(
            SecondsSetting.finishedTtl(Optional.empty()).secondsFor(task(30L, Map.of(), Map.of())))
        .contains(30L);
  }

  @Test
  void theStartingDeadlineIsTheTasksOwnDeadlineElseTheDefaultAndNeverItsTtl() {
    DelayedTask withTtlOnly = task(5L, Map.of(), Map.of());
    assertThat(SecondsSetting.startingDeadline(Optional.empty()).secondsFor(withTtlOnly)).isEmpty();
    assertThat(SecondsSetting.startingDeadline(Optional.of(60L)).secondsFor(withTtlOnly))
        .contains(60L);
    withTtlOnly.getSpec().setStartingDeadlineSeconds(30L);
    assertThat(SecondsSetting.startingDeadline(Optional.of(60L)).secondsFor(withTtlOnly))
        .contains(30L);
  }

  @Test
  void argoCdsTrackingAnnotationMarksItsTasks() {
    Optional<GitOpsOwner> owner =
        GitOpsOwner.of(
            task(
                5L,
                Map.of(
                    "argocd.argoproj.io/tracking-id",
                    "shop:delayedtask.io/DelayedTask:tasks/sale-end"),
                Map.of()));
    assertThat(owner).contains(new GitOpsOwner("Argo CD", "argocd.argoproj.io/tracking-id"));
    assertThat(owner.get().keptMessage())
        .isEqualTo(
            "kept: managed by Argo CD (argocd.argoproj.io/tracking-id); "
                + "deleting it would make Argo CD re-create it and fire it again");
  }

  @Test
  void fluxKustomizationLabelMarksItsTasks() {
    assertThat(
            GitOpsOwner.of(task(5L, Map.of(), Map.of("kustomize.toolkit.fluxcd.io/name", "apps"))))
        .contains(new GitOpsOwner("Flux", "kustomize.toolkit.fluxcd.io/name"));
  }

  @Test
  void fluxHelmReleaseLabelMarksItsTasks() {
    assertThat(GitOpsOwner.of(task(5L, Map.of(), Map.of("helm.toolkit.fluxcd.io/name", "shop"))))
        .contains(new GitOpsOwner("Flux", "helm.toolkit.fluxcd.io/name"));
  }

  @Test
  void aTaskWithoutMarkHasNoOwnerEvenWithLookAlikes() {
    assertThat(GitOpsOwner.of(task(5L, Map.of(), Map.of()))).isEmpty();
    // Argo CD's mark is an annotation, Flux's are labels: the other way round they mark nothing.
    assertThat(
            GitOpsOwner.of(
                task(
                    5L,
                    Map.of("kustomize.toolkit.fluxcd.io/name", "apps"),
                    Map.of(
                        "argocd.argoproj.io/tracking-id",
                        "x",
                        "app.kubernetes.io/instance",
                        "shop"))))
        .isEmpty();
  }

  private static DelayedTask task(
      Long ttl, Map<String, String> annotations, Map<String, String> labels) {
    DelayedTask task = new DelayedTask();
    task.setMetadata(
        new ObjectMetaBuilder()
            .withName("t")
            .withNamespace("tasks")
            .withAnnotations(annotations)
            .withLabels(labels)
            .build());
    DelayedTaskSpec spec = new DelayedTaskSpec();
    spec.setDelay("1m");
    spec.setTtlSecondsAfterFinished(ttl);
    task.setSpec(spec);
    return task;
  }
}
