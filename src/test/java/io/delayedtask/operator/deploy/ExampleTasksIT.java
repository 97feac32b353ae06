package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Applies k8s/10-crd.yaml and every example to the fabric8 mock API server in CRUD mode, the way
 * `kubectl apply -f` sends them (untyped), and reads them back through the typed DelayedTask client.
 */
class ExampleTasksIT {

  private static final String NAMESPACE = "default";

  private static KubernetesMockServer server;
  private static KubernetesClient client;

  @BeforeAll
  static void startApiServerWithTheCrd() {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    server = new KubernetesMockServer(new Context(), new MockWebServer(), responses,
        new KubernetesMixedDispatcher(responses), false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    client = server.createClient();
    CustomResourceDefinition crd = Manifests.one(Manifests.read(Manifests.PLAIN.resolve("10-crd.yaml")),
        CustomResourceDefinition.class);
    client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
    for (Path file : ExampleTasks.files()) {
      GenericKubernetesResource untyped = Manifests.SERIALIZATION.unmarshal(
          ExampleTasks.yaml(file.getFileName().toString()), GenericKubernetesResource.class);
      client.genericKubernetesResources(untyped.getApiVersion(), untyped.getKind())
          .inNamespace(NAMESPACE).resource(untyped).create();
    }
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.destroy();
    }
  }

  @Test
  void everyExampleIsStoredAsADelayedTask() {
    assertThat(client.resources(DelayedTask.class).inNamespace(NAMESPACE).list().getItems())
        .extracting(t -> t.getMetadata().getName())
        .containsExactlyInAnyOrder("trial-ends-reminder", "new-year-greeting", "hello-in-30s", "paused-cleanup",
            "flash-sale-end", "berlin-morning-report");
    assertThat(client.resources(DelayedTask.class).inAnyNamespace().withField("metadata.name", "hello-in-30s")
        .list().getItems()).hasSize(1);
  }

  @Test
  void statusOnlyTaskHasADelayAPayloadAndNoJob() {
    DelayedTask task = read("trial-ends-reminder");
    assertThat(task.getSpec().getDelay()).isEqualTo("2m");
    assertThat(task.getSpec().getRunAt()).isNull();
    assertThat(task.getSpec().getJobTemplate()).isNull();
    assertThat(task.getSpec().getPayload()).containsEntry("customer", "acme")
        .containsEntry("action", "send-trial-ending-email");
  }

  @Test
  void runAtTaskRunsABusyboxJobAtAnAbsoluteTime() {
    DelayedTask task = read("new-year-greeting");
    assertThat(task.getSpec().getRunAt()).isEqualTo("2028-01-01T00:00:00Z");
    assertThat(task.getSpec().getDelay()).isNull();
    assertThat(task.getSpec().getJobTemplate().getMetadata().getLabels()).containsEntry("app", "greeter");
    JobSpec job = task.getSpec().getJobTemplate().getSpec();
    assertThat(job.getBackoffLimit()).isEqualTo(2);
    assertThat(job.getTemplate().getSpec().getContainers()).singleElement()
        .satisfies(c -> assertThat(c.getImage()).isEqualTo("busybox:1.36"));
  }

  @Test
  void delayTaskRunsAnAlpineJobWithAPayload() {
    DelayedTask task = read("hello-in-30s");
    assertThat(task.getSpec().getDelay()).isEqualTo("30s");
    assertThat(task.getSpec().getPayload()).containsEntry("ticket", "OPS-1234");
    assertThat(task.getSpec().getJobTemplate().getSpec().getTemplate().getSpec().getContainers()).singleElement()
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
    assertThat(task.getSpec().getJobTemplate().getSpec().getActiveDeadlineSeconds()).isEqualTo(120L);
  }

  private static DelayedTask read(String name) {
    DelayedTask task = client.resources(DelayedTask.class).inNamespace(NAMESPACE).withName(name).get();
    assertThat(task).as("DelayedTask %s/%s", NAMESPACE, name).isNotNull();
    assertThat(task.getMetadata().getUid()).as("stored by the API server").isNotBlank();
    return task;
  }
}
