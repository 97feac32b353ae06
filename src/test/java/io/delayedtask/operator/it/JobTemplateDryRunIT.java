package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.editSpec;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Job task's template is judged by a real API server when the task is scheduled (a dry run of its
 * Job's creation), not at its due time, which here is years away: what the API server refuses makes
 * the task Invalid at once with the API server's message naming the task's field; a good template
 * is Scheduled; no Job is created by the check; fixing the spec schedules it. A task too large for
 * the operator's cache (kept there without its payload and template) is checked and fired from the
 * whole of it.
 */
@RequiresRealKubernetes
class JobTemplateDryRunIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  private static final String FAR = "2099-01-01T00:00:00Z";

  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static OperatorFixture.OnRealKubernetes world;
  private static String ns;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.shared();
    client = kube.client();
    world = OperatorFixture.startOnRealKubernetes(kube, "dryrun", Map.of());
    ns = world.namespace();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
  }

  /**
   * One container, the given name, and the given restartPolicy (null: left out, the pod's default
   * Always).
   */
  private static JobTemplateSpec template(String containerName, String restartPolicy) {
    return new JobTemplateSpecBuilder()
        .withNewSpec()
        .withNewTemplate()
        .withNewSpec()
        .addNewContainer()
        .withName(containerName)
        .withImage("busybox")
        .withCommand("true")
        .endContainer()
        .withRestartPolicy(restartPolicy)
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  private static String invalidMessage(String name) {
    await(name + " Invalid")
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, name).orElse(null) == Phase.Invalid);
    return get(client, ns, name).getStatus().getMessage();
  }

  @Test
  void aTemplateWithoutRestartPolicyNeverOrOnFailureIsInvalidAtOnceWithTheApiServersMessage() {
    create(
        client,
        task(
            ns,
            "no-restart-policy",
            s -> {
              s.setRunAt(FAR);
              s.setJobTemplate(template("main", null));
            }));

    String message = invalidMessage("no-restart-policy");

    assertThat(message)
        .startsWith(
            "spec.jobTemplate is refused by the API server (a dry run of the Job's creation): ")
        .contains("spec.jobTemplate.spec.template.spec.restartPolicy")
        .contains("\"Never\"")
        .endsWith("; fix spec.jobTemplate and apply the task again");
    assertThat(Events.reasons(client, ns, "no-restart-policy")).contains("Invalid");
    assertThat(
            client
                .batch()
                .v1()
                .jobs()
                .inNamespace(ns)
                .withLabel("delayedtask.io/task", "no-restart-policy")
                .list()
                .getItems())
        .as("the dry run stores nothing")
        .isEmpty();
  }

  @Test
  void aBadContainerNameIsInvalidAtOnceAndFixingTheSpecSchedulesIt() {
    create(
        client,
        task(
            ns,
            "bad-container",
            s -> {
              s.setRunAt(FAR);
              s.setJobTemplate(template("Bad_Name", "Never"));
            }));

    assertThat(invalidMessage("bad-container"))
        .contains("spec.jobTemplate.spec.template.spec.containers[0].name")
        .contains("Bad_Name");

    editSpec(client, ns, "bad-container", s -> s.setJobTemplate(template("main", "Never")));
    await("fixed: Scheduled")
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "bad-container").orElse(null) == Phase.Scheduled);
    assertThat(get(client, ns, "bad-container").getStatus().getMessage()).isNull();
  }

  @Test
  void aGoodTemplateIsScheduledAndNoJobExistsBeforeTheDueTime() {
    create(
        client,
        task(
            ns,
            "good",
            s -> {
              s.setRunAt(FAR);
              s.setJobTemplate(Tasks.busyboxJob());
            }));

    await("Scheduled")
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "good").orElse(null) == Phase.Scheduled);
    assertThat(
            client
                .batch()
                .v1()
                .jobs()
                .inNamespace(ns)
                .withLabel("delayedtask.io/task", "good")
                .list()
                .getItems())
        .isEmpty();
  }

  @Test
  void aTaskTooLargeToCacheWholeIsCheckedAndFiredFromAllOfIt() {
    Map<String, String> payload = new java.util.TreeMap<>();
    for (int i = 0; i < 16; i++) {
      payload.put("k" + i, Character.toString('a' + i).repeat(4096)); // 64 KiB: cached without it
    }
    create(
        client,
        task(
            ns,
            "large-bad",
            s -> {
              s.setRunAt(FAR);
              s.setPayload(payload);
              s.setJobTemplate(template("Bad_Name", "Never"));
            }));
    create(
        client,
        task(
            ns,
            "large",
            s -> {
              s.setDelay("2s");
              s.setPayload(payload);
              s.setJobTemplate(template("main", "Never"));
            }));

    assertThat(invalidMessage("large-bad"))
        .contains("spec.jobTemplate.spec.template.spec.containers[0].name");
    await("the large task's Job")
        .atMost(TIMEOUT)
        .until(
            () ->
                !client
                    .batch()
                    .v1()
                    .jobs()
                    .inNamespace(ns)
                    .withLabel("delayedtask.io/task", "large")
                    .list()
                    .getItems()
                    .isEmpty());
    var job =
        client
            .batch()
            .v1()
            .jobs()
            .inNamespace(ns)
            .withLabel("delayedtask.io/task", "large")
            .list()
            .getItems()
            .get(0);
    payload.forEach(
        (key, value) ->
            assertThat(job.getMetadata().getAnnotations())
                .containsEntry("delayedtask.io/payload." + key, value));
    assertThat(job.getSpec().getTemplate().getSpec().getContainers())
        .extracting(c -> c.getName())
        .containsExactly("main");
    await("Running")
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "large").orElse(null) == Phase.Running);
  }
}
