package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's {@code helm test} hook ({@code templates/tests/fires-a-task.yaml}) run against a real
 * API server as far as a server without nodes allows: its ServiceAccount, Role and RoleBinding are
 * created as Helm creates them, and the test Pod's own command runs here with the Pod's
 * environment, kubectl on its PATH and a kubeconfig holding nothing but a token of that
 * ServiceAccount, so the script meets exactly the rights the hook grants it. What is not run is the
 * kubelet's part (pulling {@code test.image}, the Pod's security context), which needs a node.
 */
@RequiresRealKubernetes
class HelmTestHookIT {
  @TempDir static Path dir;

  private static RealKubernetes kube;
  private static OperatorFixture.OnRealKubernetes operator;

  @BeforeAll
  static void startAnOperator() {
    kube = RealKubernetes.shared();
    operator = OperatorFixture.startOnRealKubernetes(kube, "helm-test", Map.of());
  }

  @AfterAll
  static void stop() {
    if (operator != null) {
      operator.close();
    }
  }

  @Test
  void theHookCreatesATaskSeesItFiredAndDeletesIt() throws Exception {
    HookRun run = runHook(operator.namespace(), 30);

    assertThat(run.exitCode()).as("the hook's exit code; its output:%n%s", run.output()).isZero();
    assertThat(run.output()).contains("DelayedTask " + run.task() + " fired");
    await("the hook's task deleted")
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                kube.client()
                        .resources(DelayedTask.class)
                        .inNamespace(operator.namespace())
                        .withName(run.task())
                        .get()
                    == null);
  }

  @Test
  void withNoOperatorTheHookFailsSayingWhatToCheck() throws Exception {
    String unwatched = kube.createNamespace("helm-test-unwatched");

    HookRun run = runHook(unwatched, 5);

    assertThat(run.exitCode())
        .as("the hook's exit code; its output:%n%s", run.output())
        .isEqualTo(1);
    assertThat(run.output())
        .contains(
            "DelayedTask "
                + run.task()
                + " is '', not Fired: is the operator running "
                + "and leading? kubectl logs -l app.kubernetes.io/instance="
                + RenderedChart.RELEASE);
    assertThat(
            kube.client()
                .resources(DelayedTask.class)
                .inNamespace(unwatched)
                .withName(run.task())
                .get())
        .as("the hook deletes its task when it fails too")
        .isNull();
  }

  private record HookRun(String task, int exitCode, String output) {}

  /**
   * Renders the chart with its test hook for a release in {@code namespace}, creates the hook's
   * ServiceAccount, Role and RoleBinding, and runs the test Pod's command as that ServiceAccount.
   */
  private static HookRun runHook(String namespace, int timeoutSeconds)
      throws IOException, InterruptedException {
    RenderedChart chart =
        RenderedChart.renderWithHooks(
            """
        test:
          enabled: true
          timeoutSeconds: %d
        """
                .formatted(timeoutSeconds),
            namespace);
    ServiceAccount account = hook(chart, ServiceAccount.class);
    kube.client().resource(account).create();
    kube.client().resource(hook(chart, Role.class)).create();
    kube.client().resource(hook(chart, RoleBinding.class)).create();
    Path kubeconfig =
        kube.serviceAccountKubeconfig(
            namespace, account.getMetadata().getName(), dir.resolve(namespace + ".kubeconfig"));

    Container container = hook(chart, Pod.class).getSpec().getContainers().get(0);
    ProcessBuilder builder = new ProcessBuilder(container.getCommand()).redirectErrorStream(true);
    Map<String, String> env = builder.environment();
    for (EnvVar variable : container.getEnv()) {
      env.put(variable.getName(), variable.getValue());
    }
    // Each run its own HOME (kubectl's discovery cache), not the shared /tmp the Pod's emptyDir is.
    env.put("HOME", Files.createDirectories(dir.resolve(namespace + "-home")).toString());
    env.put("KUBECONFIG", kubeconfig.toString());
    Path kubectl = kube.kubectl(kubeconfig).binary();
    env.put("PATH", kubectl.getParent() + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
    Process process = builder.start();
    byte[] output = process.getInputStream().readAllBytes();
    assertThat(process.waitFor(timeoutSeconds + 30, TimeUnit.SECONDS)).as("the hook ends").isTrue();
    return new HookRun(
        env.get("TASK"), process.exitValue(), new String(output, StandardCharsets.UTF_8));
  }

  private static <T extends HasMetadata> T hook(RenderedChart chart, Class<T> type) {
    List<T> hooks =
        chart.all(type).stream()
            .filter(
                object ->
                    "test".equals(object.getMetadata().getAnnotations().get(RenderedChart.HOOK)))
            .toList();
    assertThat(hooks).as("the chart's test hook's %s", type.getSimpleName()).hasSize(1);
    return hooks.get(0);
  }
}
