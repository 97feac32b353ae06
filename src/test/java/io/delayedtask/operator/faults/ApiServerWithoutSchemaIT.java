package io.delayedtask.operator.faults;

import static io.delayedtask.operator.testing.Tasks.busyboxJob;
import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RedisProcess;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a real API server never lets happen, on the mock API server that lets it: a status write
 * refused on cue (injected), and objects that neither a schema nor pruning has touched (fields of a
 * newer CRD, wrong-typed fields). The operator must ride through each without losing a task or
 * stopping. Everything a real API server decides is in {@code it/LifecycleIT}.
 */
class ApiServerWithoutSchemaIT {
  private static final String NS = "no-schema";
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  private static RedisProcess redis;
  private static MockApiServer kube;
  private static KubernetesClient client;
  private static DelayedTaskOperator operator;

  @BeforeAll
  static void start() {
    redis = RedisProcess.start();
    kube = MockApiServer.start();
    client = kube.client();
    Map<String, String> env = OperatorFixture.env(redis, "no-schema", "op-1");
    operator = OperatorFixture.start(env, kube.newClient());
    await().atMost(TIMEOUT).until(operator::isFiring);
    create(client, task(NS, "warm-up", s -> s.setRunAt("2099-01-01T00:00:00Z")));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, NS, "warm-up").orElse(null) == Phase.Scheduled);
  }

  @AfterAll
  static void stop() {
    if (operator != null) {
      operator.close();
    }
    if (kube != null) {
      kube.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  @Test
  void aJobCreatedBeforeALostStatusWriteIsRunningEvenPastTheDeadline() {
    Instant runAt = Instant.now().plusSeconds(3);
    create(
        client,
        task(
            NS,
            "lost-write",
            s -> {
              s.setRunAt(runAt.toString());
              s.setStartingDeadlineSeconds(1L);
              s.setJobTemplate(busyboxJob());
            }));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, NS, "lost-write").orElse(null) == Phase.Scheduled);
    // From now on the status writes fail for a while: the Job gets created, the first attempts to
    // record Running do not, and (each refusal taking a second) the write that lands comes after
    // startingDeadlineSeconds.
    String statusPath =
        "/apis/delayedtask.io/v1alpha1/namespaces/" + NS + "/delayedtasks/lost-write/status";
    ApiFault conflicts =
        kube.inject(
            ApiFault.of("PUT", statusPath, 409, 3)
                .withStatusReason("Conflict")
                .delayed(Duration.ofSeconds(1)));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, NS, "lost-write").filter(p -> p != Phase.Scheduled).isPresent());
    DelayedTask task = get(client, NS, "lost-write");
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Running);
    assertThat(conflicts.usedUp()).as("all three 409s were served").isTrue();
    Instant deadline = Instant.parse(task.getStatus().getDueTime()).plusSeconds(1);
    assertThat(
            kube.calls(
                call ->
                    call.isStatusWrite() && call.path().startsWith(statusPath) && call.succeeded()))
        .as("the status write that recorded Running")
        .last()
        .satisfies(write -> assertThat(write.at()).isAfter(deadline));
    List<Job> jobs = jobsOf(task);
    assertThat(jobs)
        .singleElement()
        .satisfies(
            job -> {
              assertThat(job.getMetadata().getName()).isEqualTo(task.getStatus().getJobName());
              assertThat(job.getMetadata().getAnnotations())
                  .containsEntry("delayedtask.io/fired-time", task.getStatus().getFiredTime());
            });
    assertThat(Events.reasons(client, NS, "lost-write")).doesNotContain("Missed");
    assertThat(Events.count(client, NS, "lost-write", "JobCreated")).isEqualTo(1);
  }

  @Test
  void aFieldThisVersionDoesNotKnowIsIgnoredAndTheTaskFires() {
    // A newer CRD applied before the operator is upgraded; the mock, like a CRD without pruning,
    // keeps the fields.
    createRaw(
        "from-newer-crd",
        """
        {"delay":"500ms","timeZone":"Europe/Berlin","somethingNew":{"nested":[1,2]}}""");
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, NS, "from-newer-crd").orElse(null) == Phase.Fired);
    assertThat(
            client
                .genericKubernetesResources("delayedtask.io/v1alpha1", "DelayedTask")
                .inNamespace(NS)
                .withName("from-newer-crd")
                .get()
                .getAdditionalProperties()
                .get("spec")
                .toString())
        .contains("somethingNew");
  }

  @Test
  void aTaskTheOperatorCannotReadIsInvalidNamingTheFieldAndOthersStillFire() {
    // Wrong types, which only an API server without the CRD's schema lets through.
    createRaw(
        "unreadable-suspend",
        """
        {"delay":"500ms","suspend":"yes-please"}""");
    createRaw(
        "unreadable-payload",
        """
        {"delay":"500ms","payload":5}""");
    Map<String, String> expected =
        Map.of(
            "unreadable-suspend", "spec.suspend must be true or false, not \"yes-please\"",
            "unreadable-payload", "spec.payload must be a map of string values, not 5");

    expected.forEach(
        (name, message) ->
            await(name)
                .atMost(TIMEOUT)
                .untilAsserted(
                    () -> {
                      DelayedTask read = get(client, NS, name);
                      assertThat(read.getStatus()).isNotNull();
                      assertThat(read.getStatus().getPhase()).isEqualTo(Phase.Invalid);
                      assertThat(read.getStatus().getMessage()).contains(message);
                    }));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> assertThat(Events.reasons(client, NS, "unreadable-suspend")).contains("Invalid"));

    create(client, task(NS, "good-after-unreadable", s -> s.setDelay("500ms")));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, NS, "good-after-unreadable").orElse(null) == Phase.Fired);
    // Writing the status left the stored spec alone: still Invalid, nothing fired.
    assertThat(phase(client, NS, "unreadable-suspend")).contains(Phase.Invalid);
    assertThat(
            client
                .genericKubernetesResources("delayedtask.io/v1alpha1", "DelayedTask")
                .inNamespace(NS)
                .withName("unreadable-suspend")
                .get()
                .getAdditionalProperties()
                .get("spec")
                .toString())
        .contains("yes-please");
  }

  @Test
  void anUnreadableTaskWhoseStatusCannotBeWrittenIsReportedByAnEvent() {
    kube.server()
        .expect()
        .put()
        .withPath(
            "/apis/delayedtask.io/v1alpha1/namespaces/" + NS + "/delayedtasks/unwritable/status")
        .andReturn(
            422,
            new StatusBuilder()
                .withCode(422)
                .withReason("Invalid")
                .withMessage(
                    "DelayedTask.delayedtask.io \"unwritable\" is invalid: status: refused")
                .build())
        .always();
    createRaw(
        "unwritable",
        """
        {"delay":"500ms","payload":5}""");

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(client.v1().events().inNamespace(NS).list().getItems())
                    .filteredOn(e -> "unwritable".equals(e.getInvolvedObject().getName()))
                    .singleElement()
                    .satisfies(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("Invalid");
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getMessage())
                              .contains("spec.payload must be a map of string values, not 5")
                              .contains("the status could not be written")
                              .contains("status: refused");
                        }));
    assertThat(get(client, NS, "unwritable").getStatus()).isNull();
  }

  /** Creates a task from a raw spec, past the typed classes (as kubectl would send it). */
  private static void createRaw(String name, String specJson) {
    client
        .genericKubernetesResources("delayedtask.io/v1alpha1", "DelayedTask")
        .inNamespace(NS)
        .resource(
            io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
                """
            {"apiVersion":"delayedtask.io/v1alpha1","kind":"DelayedTask",
             "metadata":{"name":"%s","namespace":"%s"},"spec":%s}"""
                    .formatted(name, NS, specJson),
                io.fabric8.kubernetes.api.model.GenericKubernetesResource.class))
        .create();
  }

  private static List<Job> jobsOf(DelayedTask task) {
    return client
        .batch()
        .v1()
        .jobs()
        .inNamespace(NS)
        .withLabel("delayedtask.io/task-uid", task.getMetadata().getUid())
        .list()
        .getItems();
  }
}
