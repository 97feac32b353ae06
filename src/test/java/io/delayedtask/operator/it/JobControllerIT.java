package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.KwokCluster;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresKwok;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A task's outcome comes from its Job's, and here the Job's comes from the real Job controller: the
 * scheduler places the pod on kwok's fake Node, kwok runs it to Succeeded or Failed, and
 * kube-controller-manager's Job controller writes the Job's conditions. Nobody writes Job status by
 * hand (no {@link JobOutcomes}), so the operator reads exactly what Kubernetes produces.
 */
@RequiresKwok
class JobControllerIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(90);

  private static RealKubernetes kube;
  private static KwokCluster kwok;
  private static KubernetesClient client;
  private static String ns;
  private static OperatorFixture.OnRealKubernetes world;
  private static DelayedTaskOperator operator;

  @BeforeAll
  static void start() {
    // A server of its own: its Job controller must not touch the Jobs other tests complete by hand.
    kube = RealKubernetes.startDedicated();
    kwok = KwokCluster.start(kube);
    client = kube.client();
    world = OperatorFixture.startOnRealKubernetes(kube, "jobs", Map.of());
    ns = world.namespace();
    operator = world.operator();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
    if (kwok != null) {
      kwok.close();
    }
    if (kube != null) {
      kube.close();
    }
  }

  @Test
  void aJobWhosePodSucceedsMakesTheTaskSucceeded() {
    create(
        client,
        task(
            ns,
            "pod-succeeds",
            s -> {
              s.setDelay("500ms");
              s.setJobTemplate(jobTemplate(Map.of()));
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "pod-succeeds").orElse(null) == Phase.Succeeded);

    DelayedTask task = get(client, ns, "pod-succeeds");
    Job job = job(task.getStatus().getJobName());
    assertThat(JobOutcomes.trueConditions(job)).contains("SuccessCriteriaMet", "Complete");
    assertThat(job.getStatus().getSucceeded()).isEqualTo(1);
    assertThat(podsOf(job))
        .singleElement()
        .satisfies(
            pod -> {
              assertThat(pod.getSpec().getNodeName())
                  .as("scheduled onto kwok's Node")
                  .isEqualTo(KwokCluster.NODE);
              assertThat(pod.getStatus().getPhase()).isEqualTo("Succeeded");
            });
    assertThat(task.getStatus().getMessage()).isNull();
  }

  @Test
  void aJobWhosePodFailsMakesTheTaskFailedWithTheJobsMessage() {
    create(
        client,
        task(
            ns,
            "pod-fails",
            s -> {
              s.setDelay("500ms");
              s.setJobTemplate(jobTemplate(Map.of(KwokCluster.OUTCOME_LABEL, KwokCluster.FAIL)));
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "pod-fails").orElse(null) == Phase.Failed);

    DelayedTask task = get(client, ns, "pod-fails");
    Job job = job(task.getStatus().getJobName());
    JobCondition failed =
        job.getStatus().getConditions().stream()
            .filter(c -> "Failed".equals(c.getType()) && "True".equals(c.getStatus()))
            .findFirst()
            .orElseThrow();
    assertThat(failed.getReason())
        .as("backoffLimit 0: one failed pod is the end")
        .isEqualTo("BackoffLimitExceeded");
    assertThat(job.getStatus().getFailed()).isEqualTo(1);
    assertThat(podsOf(job))
        .singleElement()
        .satisfies(
            pod -> {
              assertThat(pod.getSpec().getNodeName()).isEqualTo(KwokCluster.NODE);
              assertThat(pod.getStatus().getPhase()).isEqualTo("Failed");
            });
    assertThat(task.getStatus().getMessage())
        .isEqualTo("Job " + job.getMetadata().getName() + " failed: " + failed.getMessage());
  }

  @Test
  void jobsTheTtlControllerDeletesAsSoonAsTheyCompleteStillMakeTheirTasksSucceeded() {
    // ttlSecondsAfterFinished: 0 deletes each Job right after it completes. A burst of them keeps
    // the operator busy, so the reconcile of a completion can come after the deletion: the outcome
    // then comes from the Job's last state, as its delete notification carried it (issue 16, 3).
    List<String> names = new java.util.ArrayList<>();
    for (int i = 0; i < 20; i++) {
      String name = "ttl-zero-" + i;
      create(
          client,
          task(
              ns,
              name,
              s -> {
                s.setDelay("1s");
                JobTemplateSpec template = jobTemplate(Map.of());
                template.getSpec().setTtlSecondsAfterFinished(0);
                s.setJobTemplate(template);
              }));
      names.add(name);
    }

    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                names.stream()
                    .map(n -> phase(client, ns, n).orElse(null))
                    .allMatch(p -> p == Phase.Succeeded || p == Phase.Failed));
    assertThat(names)
        .allSatisfy(n -> assertThat(get(client, ns, n).getStatus().getMessage()).as(n).isNull());
    assertThat(names)
        .allSatisfy(n -> assertThat(phase(client, ns, n)).as(n).contains(Phase.Succeeded));
    await("the TTL controller deleted the Jobs")
        .atMost(TIMEOUT)
        .until(
            () ->
                names.stream()
                    .allMatch(n -> job(get(client, ns, n).getStatus().getJobName()) == null));
  }

  /** One container, backoffLimit 0; {@code podLabels} go on the pod (kwok's stages read them). */
  private static JobTemplateSpec jobTemplate(Map<String, String> podLabels) {
    return new JobTemplateSpecBuilder()
        .withNewSpec()
        .withBackoffLimit(0)
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(podLabels)
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("main")
        .withImage("busybox:1.36")
        .withCommand("echo", "hi")
        .endContainer()
        .withRestartPolicy("Never")
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  private static Job job(String name) {
    return client.batch().v1().jobs().inNamespace(ns).withName(name).get();
  }

  private static List<Pod> podsOf(Job job) {
    return client
        .pods()
        .inNamespace(ns)
        .withLabel("job-name", job.getMetadata().getName())
        .list()
        .getItems();
  }
}
