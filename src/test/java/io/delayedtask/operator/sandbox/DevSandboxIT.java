package io.delayedtask.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.KwokCluster;
import io.delayedtask.operator.testing.RealKubernetes.Kubectl;
import io.delayedtask.operator.testing.RequiresKwok;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The README's tour, on the real control plane: the sandbox starts, and what a newcomer types into
 * another terminal works, with the kubectl of the API server's release and the kubeconfig the
 * sandbox wrote. Each of these failed on the mock API server.
 */
@RequiresRealKubernetes
@RequiresLoopbackOnlyNetwork
class DevSandboxIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(90);
  private static final DevSandbox sandbox = new DevSandbox(DevSandbox.ControlPlane.REAL);
  private static Kubectl kubectl;

  @BeforeAll
  static void start() throws Exception {
    System.setProperty("sandbox.httpPort", "0");
    sandbox.start(Path.of("").toAbsolutePath());
    kubectl =
        new Kubectl(
            sandbox.realKubernetes().orElseThrow().binaries().binary("kubectl"),
            sandbox.kubeconfig());
  }

  @AfterAll
  static void stop() {
    sandbox.stop();
  }

  @Test
  void kubectlAppliesTheExamplesWithValidation() {
    Kubectl.Result apply = kubectl.run("apply", "-f", "k8s/examples/");

    assertThat(apply.ok()).as(apply.output()).isTrue();
    assertThat(apply.stdout())
        .contains(
            "delayedtask.delayedtask.io/hello-in-30s", "delayedtask.delayedtask.io/paused-cleanup");
    // Validation is on: the API server's OpenAPI knows the CRD's schema, so a misspelt field is
    // refused.
    Kubectl.Result misspelt =
        kubectl.run(
            Duration.ofSeconds(60),
            """
        apiVersion: delayedtask.io/v1alpha1
        kind: DelayedTask
        metadata:
          name: misspelt
        spec:
          dealy: 30s
        """,
            "apply",
            "--validate=strict",
            "-f",
            "-");
    assertThat(misspelt.ok()).isFalse();
    assertThat(misspelt.stderr()).contains("unknown field \"spec.dealy\"");
  }

  @Test
  void kubectlGetShowsThePrinterColumns() {
    await().atMost(TIMEOUT).until(() -> kubectl.run("get", "dt").stdout().contains("hello-in-30s"));

    String header = kubectl.run("get", "dt").stdout().lines().findFirst().orElse("");

    // The order is the CRD's (NAME PHASE DUE JOB AGE once the generator keeps it); all five are
    // there.
    assertThat(List.of(header.trim().split("\\s+"))).contains("NAME", "PHASE", "DUE", "JOB", "AGE");
  }

  @Test
  void kubectlGetWatchStreamsAPhaseChange() throws Exception {
    apply(
        """
        apiVersion: delayedtask.io/v1alpha1
        kind: DelayedTask
        metadata:
          name: watched
        spec:
          delay: 8s
        """);
    await().atMost(TIMEOUT).until(() -> phaseOf("watched") == Phase.Scheduled);
    Process watch = kubectl.start("get", "dt", "watched", "-w");
    try {
      StringBuffer seen = readInBackground(watch);

      await().atMost(TIMEOUT).until(() -> seen.toString().contains("Fired"));

      List<String> rows = seen.toString().lines().filter(l -> l.startsWith("watched")).toList();
      assertThat(rows).as(seen.toString()).hasSizeGreaterThanOrEqualTo(2);
      assertThat(rows.get(0)).contains("Scheduled");
      assertThat(rows.get(rows.size() - 1)).contains("Fired");
    } finally {
      watch.destroy();
    }
  }

  @Test
  void kubectlWaitSeesATaskWithAJobSucceed() {
    apply(jobTask("waited", "1s"));

    Kubectl.Result wait =
        kubectl.run(
            TIMEOUT.plusSeconds(10),
            null,
            "wait",
            "--for=jsonpath={.status.phase}=Succeeded",
            "dt/waited",
            "--timeout=" + TIMEOUT.toSeconds() + "s");

    assertThat(wait.ok()).as(wait.output()).isTrue();
    assertThat(wait.stdout()).contains("delayedtask.delayedtask.io/waited condition met");
  }

  @Test
  void kubectlDescribeShowsTheEvents() {
    apply(jobTask("described", "1s"));

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              String describe = kubectl.run("describe", "dt", "described").stdout();
              assertThat(describe).contains("Events:");
              assertThat(describe.substring(describe.indexOf("Events:")))
                  .contains("Scheduled", "JobCreated", "Succeeded");
            });
  }

  @Test
  void kubectlCreatesANamespace() {
    Kubectl.Result create = kubectl.run("create", "namespace", "sandbox-tour");

    assertThat(create.ok()).as(create.output()).isTrue();
    assertThat(kubectl.run("get", "namespace", "sandbox-tour", "-o", "name").stdout().trim())
        .isEqualTo("namespace/sandbox-tour");
  }

  @Test
  @RequiresKwok
  void aTasksJobRunsThroughTheRealJobController() {
    assertThat(sandbox.jobsRunOnKwok()).isTrue();
    apply(jobTask("runs-for-real", "1s"));

    await().atMost(TIMEOUT).until(() -> phaseOf("runs-for-real") == Phase.Succeeded);

    String jobName =
        sandbox
            .client()
            .resources(DelayedTask.class)
            .inNamespace("default")
            .withName("runs-for-real")
            .get()
            .getStatus()
            .getJobName();
    Job job = sandbox.client().batch().v1().jobs().inNamespace("default").withName(jobName).get();
    assertThat(job.getStatus().getSucceeded()).as("counted by the Job controller").isEqualTo(1);
    List<Pod> pods =
        sandbox
            .client()
            .pods()
            .inNamespace("default")
            .withLabel("job-name", jobName)
            .list()
            .getItems();
    assertThat(pods)
        .singleElement()
        .satisfies(
            pod -> {
              assertThat(pod.getSpec().getNodeName()).isEqualTo(KwokCluster.NODE);
              assertThat(pod.getStatus().getPhase()).isEqualTo("Succeeded");
            });
  }

  private static void apply(String manifest) {
    Kubectl.Result apply = kubectl.run(Duration.ofSeconds(60), manifest, "apply", "-f", "-");
    assertThat(apply.ok()).as(apply.output()).isTrue();
  }

  private static String jobTask(String name, String delay) {
    return """
        apiVersion: delayedtask.io/v1alpha1
        kind: DelayedTask
        metadata:
          name: %s
        spec:
          delay: %s
          jobTemplate:
            spec:
              backoffLimit: 0
              template:
                spec:
                  restartPolicy: Never
                  containers:
                    - name: hello
                      image: busybox:1.36
                      command: ["echo", "hi"]
        """
        .formatted(name, delay);
  }

  private static Phase phaseOf(String name) {
    return Tasks.phase(sandbox.client(), "default", name).orElse(null);
  }

  /** Collects a process's output as it comes, for a test that waits for a line. */
  private static StringBuffer readInBackground(Process process) {
    StringBuffer seen = new StringBuffer();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader lines =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                  seen.append(line).append('\n');
                }
              } catch (IOException stopped) {
                // the test destroyed the process: nothing more to read
              }
            },
            "kubectl-watch-reader");
    reader.setDaemon(true);
    reader.start();
    return seen;
  }
}
