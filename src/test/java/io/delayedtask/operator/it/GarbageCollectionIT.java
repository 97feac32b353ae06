package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.busyboxJob;
import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.task.job.JobFactory;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The contract says a task's Job "goes by garbage collection": the operator has no right to delete
 * Jobs, so only the owner reference can take the Job away. That needs kube-controller-manager's
 * garbage collector, which a bare API server does not run.
 */
@RequiresRealKubernetes
class GarbageCollectionIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static String ns;
  private static OperatorFixture.OnRealKubernetes world;
  private static DelayedTaskOperator operator;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.shared();
    kube.controllerManager();
    client = kube.client();
    world = OperatorFixture.startOnRealKubernetes(kube, "gc", Map.of());
    ns = world.namespace();
    operator = world.operator();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
  }

  @Test
  void deletingARunningTaskByHandTakesItsJobWithIt() {
    create(
        client,
        task(
            ns,
            "by-hand",
            s -> {
              s.setDelay("500ms");
              s.setJobTemplate(busyboxJob());
            }));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "by-hand").orElse(null) == Phase.Running);
    String jobName = get(client, ns, "by-hand").getStatus().getJobName();
    assertThat(job(jobName)).isNotNull();

    client
        .resources(io.delayedtask.operator.api.v1alpha1.DelayedTask.class)
        .inNamespace(ns)
        .withName("by-hand")
        .delete();

    await("the task is gone").atMost(TIMEOUT).until(() -> get(client, ns, "by-hand") == null);
    await("its Job is collected").atMost(TIMEOUT).until(() -> job(jobName) == null);
  }

  @Test
  void aTaskDeletedByItsTtlTakesItsJobWithIt() {
    create(
        client,
        task(
            ns,
            "ttl",
            s -> {
              s.setDelay("500ms");
              s.setTtlSecondsAfterFinished(1L);
              s.setJobTemplate(busyboxJob());
            }));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "ttl").orElse(null) == Phase.Running);
    String jobName = get(client, ns, "ttl").getStatus().getJobName();
    JobOutcomes.complete(client, job(jobName));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "ttl").orElse(null) == Phase.Succeeded);

    await("the TTL deletes the task").atMost(TIMEOUT).until(() -> get(client, ns, "ttl") == null);
    await("its Job is collected").atMost(TIMEOUT).until(() -> job(jobName) == null);
  }

  @Test
  void aJobOfALiveTaskIsNotCollected() {
    for (String name : List.of("alive", "control")) {
      create(
          client,
          task(
              ns,
              name,
              s -> {
                s.setDelay("500ms");
                s.setJobTemplate(busyboxJob());
              }));
    }
    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                phase(client, ns, "alive").orElse(null) == Phase.Running
                    && phase(client, ns, "control").orElse(null) == Phase.Running);
    String jobName = get(client, ns, "alive").getStatus().getJobName();
    String controlJob = get(client, ns, "control").getStatus().getJobName();

    // The collector has seen both Jobs and works in this namespace: it takes the control task's Job
    // once that task is gone. By then it had its chance at the live task's Job, created first.
    client
        .resources(io.delayedtask.operator.api.v1alpha1.DelayedTask.class)
        .inNamespace(ns)
        .withName("control")
        .delete();
    await("the control task's Job is collected")
        .atMost(TIMEOUT)
        .until(() -> job(controlJob) == null);

    await("the live task's Job stays")
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(30))
        .until(() -> job(jobName) != null);
    assertThat(JobFactory.isControlledBy(job(jobName), get(client, ns, "alive"))).isTrue();
  }

  private static Job job(String name) {
    return client.batch().v1().jobs().inNamespace(ns).withName(name).get();
  }
}
