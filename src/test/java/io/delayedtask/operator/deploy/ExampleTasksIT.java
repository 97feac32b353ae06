package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RealKubernetes.Kubectl;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Receiver.Answer;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Applies every example with {@code kubectl apply} (validation on: kubectl checks each against the
 * OpenAPI schema the real API server publishes for the CRD, and the server runs the CEL rules), and
 * reads them back through the typed DelayedTask client; those that can fire here, fire.
 * k8s/10-crd.yaml, the CRD the examples need, is accepted by the same server (server-side dry run,
 * so the shared server keeps the CRD this build generated; CrdCopiesTest keeps the two equal).
 */
@RequiresRealKubernetes
class ExampleTasksIT {

  private static String ns;
  private static RealKubernetes kube;
  private static KubernetesClient client;

  @BeforeAll
  static void applyTheExamples() {
    kube = RealKubernetes.shared();
    client = kube.client();
    ns = kube.createNamespace("examples");
    Kubectl.Result crd =
        kube.kubectl(
            "apply", "--dry-run=server", "-f", Manifests.PLAIN.resolve("10-crd.yaml").toString());
    assertThat(crd.ok()).as(crd.output()).isTrue();
    for (Path file : ExampleTasks.files()) {
      Kubectl.Result applied = kube.kubectl("apply", "-n", ns, "-f", file.toString());
      assertThat(applied.ok()).as("kubectl apply -f %s: %s", file, applied.output()).isTrue();
      assertThat(applied.stdout()).contains("delayedtask.delayedtask.io/").contains("created");
    }
  }

  @Test
  void reApplyingAnUnchangedExampleChangesNothing() {
    Path file = Manifests.EXAMPLES.resolve(ExampleTasks.STATUS_ONLY);
    Kubectl.Result again = kube.kubectl("apply", "-n", ns, "-f", file.toString());
    assertThat(again.ok()).as(again.output()).isTrue();
    assertThat(again.stdout()).contains("unchanged");
  }

  @Test
  void everyExampleIsStoredAsADelayedTask() {
    assertThat(client.resources(DelayedTask.class).inNamespace(ns).list().getItems())
        .extracting(t -> t.getMetadata().getName())
        .containsExactlyInAnyOrder(
            "trial-ends-reminder",
            "new-year-greeting",
            "hello-in-30s",
            "paused-cleanup",
            "flash-sale-end",
            "berlin-morning-report",
            "cancel-unpaid-order-42",
            "remind-unpaid-order-43",
            "hello-receiver",
            "cancel-order-42-via-broker",
            "queued-reminder");
    assertThat(
            client
                .resources(DelayedTask.class)
                .inNamespace(ns)
                .withField("metadata.name", "hello-in-30s")
                .list()
                .getItems())
        .hasSize(1);
  }

  @Test
  void statusOnlyTaskHasADelayAPayloadAndNoJob() {
    DelayedTask task = read("trial-ends-reminder");
    assertThat(task.getSpec().getDelay()).isEqualTo("2m");
    assertThat(task.getSpec().getRunAt()).isNull();
    assertThat(task.getSpec().getJobTemplate()).isNull();
    assertThat(task.getSpec().getPayload())
        .containsEntry("customer", "acme")
        .containsEntry("action", "send-trial-ending-email");
  }

  @Test
  void runAtTaskRunsABusyboxJobAtAnAbsoluteTime() {
    DelayedTask task = read("new-year-greeting");
    assertThat(task.getSpec().getRunAt()).isEqualTo("2028-01-01T00:00:00Z");
    assertThat(task.getSpec().getDelay()).isNull();
    assertThat(task.getSpec().getJobTemplate().getMetadata().getLabels())
        .containsEntry("app", "greeter");
    JobSpec job = task.getSpec().getJobTemplate().getSpec();
    assertThat(job.getBackoffLimit()).isEqualTo(2);
    assertThat(job.getTemplate().getSpec().getContainers())
        .singleElement()
        .satisfies(c -> assertThat(c.getImage()).isEqualTo("busybox:1.36"));
  }

  @Test
  void delayTaskRunsAnAlpineJobWithAPayload() {
    DelayedTask task = read("hello-in-30s");
    assertThat(task.getSpec().getDelay()).isEqualTo("30s");
    assertThat(task.getSpec().getPayload()).containsEntry("ticket", "OPS-1234");
    assertThat(task.getSpec().getJobTemplate().getSpec().getTemplate().getSpec().getContainers())
        .singleElement()
        .satisfies(c -> assertThat(c.getImage()).isEqualTo("alpine:3.20"));
  }

  @Test
  void suspendedTaskIsSuspended() {
    DelayedTask task = read("paused-cleanup");
    assertThat(task.getSpec().isSuspended()).isTrue();
    assertThat(task.getSpec().getDelay()).isEqualTo("1m");
    assertThat(task.getSpec().getJobTemplate()).isNotNull();
  }

  @Test
  void timeZoneTaskKeepsItsWallClockRunAtAndZone() {
    DelayedTask task = read("berlin-morning-report");
    assertThat(task.getSpec().getRunAt()).isEqualTo("2027-03-29T07:00:00");
    assertThat(task.getSpec().getTimeZone()).isEqualTo("Europe/Berlin");
  }

  @Test
  void deadlineTaskHasAStartingDeadlineAndATtl() {
    DelayedTask task = read("flash-sale-end");
    assertThat(task.getSpec().getDelay()).isEqualTo("45s");
    assertThat(task.getSpec().getStartingDeadlineSeconds()).isEqualTo(60L);
    assertThat(task.getSpec().getTtlSecondsAfterFinished()).isEqualTo(300L);
    assertThat(task.getSpec().getJobTemplate().getSpec().getActiveDeadlineSeconds())
        .isEqualTo(120L);
  }

  @Test
  void theReceiverExampleBringsTheDeploymentAndServiceItsTaskNames() {
    DelayedTask task = read("hello-receiver");
    assertThat(client.apps().deployments().inNamespace(ns).withName("event-display").get())
        .isNotNull();
    assertThat(
            client
                .services()
                .inNamespace(ns)
                .withName(task.getSpec().getSink().getRef().getName())
                .get())
        .isNotNull();
    assertThat(task.getSpec().getCeOverrides().getExtensions())
        .containsEntry("example", "receiver");
  }

  @Test
  void theBrokerExampleIsAcceptedWithoutKnativeAndNamesABroker() {
    DelayedTask task = read("cancel-order-42-via-broker");
    assertThat(task.getSpec().getSink().getRef().getKind()).isEqualTo("Broker");
    assertThat(task.getSpec().getCeOverrides().getExtensions()).containsEntry("team", "orders");
  }

  /**
   * The examples that need nothing beyond the API server fire as they are, with the operator
   * running: each task document applied with kubectl as the file has it, only its {@code delay} cut
   * to 2 s (the files wait 30 s to 2 min). The Service {@code orders} the sink examples name is an
   * ExternalName to localhost, which is what cluster DNS would give, reaching a receiver on this
   * host's loopback. Not fired here: {@code sink-receiver.yaml} (its receiver is a Deployment whose
   * pod no node runs on this API server, and its Service's cluster IP is an address no test may
   * connect to), the Knative Broker (no Knative), and the tasks due in 2027-2028 or suspended.
   */
  @Test
  void theStatusOnlyJobAndSinkExamplesFireWithTheOperatorRunning() {
    Duration timeout = Duration.ofSeconds(60);
    try (Receiver orders = Receiver.start();
        OperatorFixture.OnRealKubernetes world =
            OperatorFixture.startOnRealKubernetes(
                kube,
                "examples-fire",
                Map.of(
                    SinkConfig.ALLOWED_URIS, "http://localhost:" + orders.port() + "/orders/"))) {
      String fired = world.namespace();
      client
          .services()
          .inNamespace(fired)
          .resource(
              new ServiceBuilder()
                  .withNewMetadata()
                  .withName("orders")
                  .endMetadata()
                  .withNewSpec()
                  .withType("ExternalName")
                  .withExternalName("localhost")
                  .addNewPort()
                  .withName("http")
                  .withPort(orders.port())
                  .endPort()
                  .endSpec()
                  .build())
          .create();
      // As in the dev sandbox: /orders/remind answers 503 once, so the retry example retries.
      orders.answer("/orders/remind", Answer.status(503), Answer.status(200));
      for (String file :
          List.of(
              ExampleTasks.STATUS_ONLY,
              ExampleTasks.JOB_DELAY,
              ExampleTasks.SINK_SERVICE,
              ExampleTasks.SINK_RETRY)) {
        String task = ExampleTasks.yaml(file);
        String dueSoon = task.replaceFirst("(?m)^  delay: .*$", "  delay: 2s");
        assertThat(dueSoon).as(file).isNotEqualTo(task);
        Kubectl.Result applied =
            kube.kubectl(kube.kubeconfig())
                .run(Duration.ofSeconds(60), dueSoon, "apply", "-n", fired, "-f", "-");
        assertThat(applied.ok()).as("kubectl apply %s: %s", file, applied.output()).isTrue();
      }

      await("trial-ends-reminder Fired")
          .atMost(timeout)
          .until(() -> phase(fired, "trial-ends-reminder") == Phase.Fired);
      await("hello-in-30s's Job")
          .atMost(timeout)
          .until(() -> read(fired, "hello-in-30s").getStatus().getJobName() != null);
      Job job =
          client
              .batch()
              .v1()
              .jobs()
              .inNamespace(fired)
              .withName(read(fired, "hello-in-30s").getStatus().getJobName())
              .get();
      assertThat(job).as("the Job hello-in-30s created").isNotNull();
      assertThat(job.getSpec().getTemplate().getSpec().getContainers())
          .singleElement()
          .satisfies(c -> assertThat(c.getImage()).isEqualTo("alpine:3.20"));
      assertThat(job.getMetadata().getAnnotations())
          .containsEntry("delayedtask.io/payload.ticket", "OPS-1234");

      await("cancel-unpaid-order-42 Succeeded")
          .atMost(timeout)
          .until(() -> phase(fired, "cancel-unpaid-order-42") == Phase.Succeeded);
      assertThat(orders.requestsTo("/orders/cancel"))
          .singleElement()
          .satisfies(
              request -> {
                assertThat(request.header("ce-type")).isEqualTo("io.delayedtask.task.due");
                assertThat(request.body()).isEqualTo("{\"orderId\":\"42\"}");
              });
      await("remind-unpaid-order-43 Succeeded")
          .atMost(timeout)
          .until(() -> phase(fired, "remind-unpaid-order-43") == Phase.Succeeded);
      assertThat(orders.requestsTo("/orders/remind"))
          .extracting(r -> r.header("ce-delayedtaskattempt"))
          .containsExactly("1", "2");
      assertThat(read(fired, "remind-unpaid-order-43").getStatus().getDelivery().getAttempts())
          .isEqualTo(2);
      assertThat(orders.requestsTo("/orders/dead-letters")).as("nothing dead-lettered").isEmpty();
    }
  }

  private static Phase phase(String namespace, String name) {
    DelayedTask task = read(namespace, name);
    return task.getStatus() == null ? null : task.getStatus().getPhase();
  }

  private static DelayedTask read(String name) {
    return read(ns, name);
  }

  private static DelayedTask read(String namespace, String name) {
    DelayedTask task =
        client.resources(DelayedTask.class).inNamespace(namespace).withName(name).get();
    assertThat(task).as("DelayedTask %s/%s", namespace, name).isNotNull();
    assertThat(task.getMetadata().getUid()).as("stored by the API server").isNotBlank();
    return task;
  }
}
