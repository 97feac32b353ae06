package io.delayedtask.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.ControlPlaneBinaries;
import io.delayedtask.operator.testing.RequiredTool;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.Tasks;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sandbox's fallback where the real control plane is not built: on the fabric8 mock API server
 * it still starts, applies the examples, fires, completes Jobs itself, and kubectl can talk to it.
 */
@RequiresLoopbackOnlyNetwork
class DevSandboxOnMockIT {
  private static final DevSandbox sandbox = new DevSandbox(DevSandbox.ControlPlane.MOCK);

  @BeforeAll
  static void start() throws Exception {
    System.setProperty("sandbox.httpPort", "0");
    sandbox.start(Path.of("").toAbsolutePath());
  }

  @AfterAll
  static void stop() {
    sandbox.stop();
  }

  @Test
  void appliesTheExamples() {
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        sandbox
                            .client()
                            .resources(DelayedTask.class)
                            .inNamespace("default")
                            .list()
                            .getItems())
                    .extracting(task -> task.getMetadata().getName())
                    .contains("hello-in-30s", "paused-cleanup", "new-year-greeting"));
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(phaseOf("paused-cleanup")).isEqualTo(Phase.Suspended));
  }

  @Test
  void aTaskAppliedByHandFiresAndItsJobCompletes() {
    sandbox.client().resource(task("readme-tour", "1s")).inNamespace("default").create();

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(phaseOf("readme-tour")).isEqualTo(Phase.Succeeded));
  }

  @Test
  void aJobWhosePodTemplateAsksToFailFailsTheTask() {
    DelayedTask task = task("fails-on-purpose", "1s");
    task.getSpec()
        .getJobTemplate()
        .getSpec()
        .getTemplate()
        .setMetadata(
            new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
                .addToLabels(io.delayedtask.operator.testing.KwokCluster.OUTCOME_LABEL, "fail")
                .build());
    sandbox.client().resource(task).inNamespace("default").create();

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(phaseOf("fails-on-purpose")).isEqualTo(Phase.Failed));
  }

  @Test
  void kubectlWorksWithTheWrittenKubeconfig() throws Exception {
    // The kubectl tools/build-control-plane.sh builds, so CI needs nothing installed for it.
    Path kubectl =
        ControlPlaneBinaries.find()
            .map(binaries -> binaries.binary("kubectl"))
            .orElseGet(
                () ->
                    RequiredTool.find(
                        "kubectl", "DELAYEDTASK_TEST_KUBECTL", "tools/build-control-plane.sh"));
    sandbox.client().resource(task("kubectl-visible", "1h")).inNamespace("default").create();

    Process get =
        new ProcessBuilder(
                kubectl.toString(),
                "--kubeconfig",
                sandbox.kubeconfig().toString(),
                "get",
                "dt",
                "-o",
                "custom-columns=NAME:.metadata.name,PHASE:.status.phase")
            .redirectErrorStream(true)
            .start();
    String output = new String(get.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

    assertThat(get.waitFor()).as(output).isZero();
    assertThat(output).contains("kubectl-visible");
    assertThat(Files.readString(sandbox.kubeconfig())).contains("server: http://");
  }

  private static Phase phaseOf(String name) {
    return Tasks.phase(sandbox.client(), "default", name).orElse(null);
  }

  private static DelayedTask task(String name, String delay) {
    DelayedTask task = new DelayedTask();
    task.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).build());
    task.setSpec(new io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec());
    task.getSpec().setDelay(delay);
    task.getSpec()
        .setJobTemplate(
            new io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpecBuilder()
                .withNewSpec()
                .withNewTemplate()
                .withNewSpec()
                .withRestartPolicy("Never")
                .addNewContainer()
                .withName("hello")
                .withImage("busybox:1.36")
                .withCommand("echo", "hi")
                .endContainer()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build());
    return task;
  }
}
