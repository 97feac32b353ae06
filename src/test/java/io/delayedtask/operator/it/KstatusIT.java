package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.busyboxJob;
import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.KstatusProgram;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What Flux sees: tasks in every phase, read back from a real API server with kubectl, judged by
 * the real kstatus library (the Go program tools/kstatus, sigs.k8s.io/cli-utils), against
 * docs/reference.md's table. No Job controller runs on the shared server, so a Job stays running
 * until the test writes its outcome (JobOutcomes).
 */
@RequiresRealKubernetes
class KstatusIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  private static String NS;
  private static OperatorFixture.OnRealKubernetes world;
  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static DelayedTaskOperator operator;
  private static KstatusProgram kstatus;

  @BeforeAll
  static void start() {
    // First, so a missing Go skips (or fails on CI) before anything starts; cold this is minutes.
    kstatus = KstatusProgram.build();
    kube = RealKubernetes.shared();
    client = kube.client();
    world = OperatorFixture.startOnRealKubernetes(kube, "kstatus", Map.of());
    NS = world.namespace();
    operator = world.operator();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
  }

  @Test
  void everyPhaseReadsToKstatusAsTheContractSays() throws Exception {
    create(client, task(NS, "scheduled", s -> s.setRunAt("2099-01-01T00:00:00Z")));
    create(
        client,
        task(
            NS,
            "suspended",
            s -> {
              s.setDelay("1s");
              s.setSuspend(true);
            }));
    create(
        client,
        task(
            NS,
            "running",
            s -> {
              s.setDelay("0s");
              s.setJobTemplate(busyboxJob());
            }));
    create(client, task(NS, "fired", s -> s.setDelay("0s")));
    create(
        client,
        task(
            NS,
            "succeeded",
            s -> {
              s.setDelay("0s");
              s.setJobTemplate(busyboxJob());
            }));
    create(
        client,
        task(
            NS,
            "failed",
            s -> {
              s.setDelay("0s");
              s.setJobTemplate(busyboxJob());
            }));
    create(
        client,
        task(
            NS,
            "missed",
            s -> {
              s.setRunAt(Instant.now().minusSeconds(120).toString());
              s.setStartingDeadlineSeconds(30L);
            }));
    // The API server's CEL refuses malformed times; a jobTemplate naming another namespace is
    // what reaches the operator and makes it Invalid.
    create(
        client,
        task(
            NS,
            "invalid",
            s -> {
              s.setDelay("0s");
              s.setJobTemplate(busyboxJob());
              s.getJobTemplate().getMetadata().setNamespace("kube-system");
            }));

    awaitPhase("running", Phase.Running);
    JobOutcomes.complete(client, job(awaitPhase("succeeded", Phase.Running)));
    JobOutcomes.fail(
        client,
        job(awaitPhase("failed", Phase.Running)),
        "Job has reached the specified backoff limit");
    Map<String, Phase> phases =
        Map.of(
            "scheduled",
            Phase.Scheduled,
            "suspended",
            Phase.Suspended,
            "fired",
            Phase.Fired,
            "succeeded",
            Phase.Succeeded,
            "failed",
            Phase.Failed,
            "missed",
            Phase.Missed,
            "invalid",
            Phase.Invalid);
    phases.forEach(KstatusIT::awaitPhase);

    // Exactly what `kubectl get dt -o json` gives a user.
    RealKubernetes.Kubectl.Result got = kube.kubectl("get", "dt", "-n", NS, "-o", "json");
    assertThat(got.ok()).as(got.output()).isTrue();
    ObjectNode list = (ObjectNode) JSON.readTree(got.stdout());

    // A spec edit the operator has not seen yet is hard to catch on cue (it reconciles within
    // milliseconds), so take the Scheduled task and raise its metadata.generation, as the API
    // server does on a spec edit, before the status catches up.
    ObjectNode edited = findItem(list, "scheduled").deepCopy();
    ObjectNode metadata = (ObjectNode) edited.get("metadata");
    metadata.put("name", "edited");
    metadata.put("generation", metadata.get("generation").asLong() + 1);
    ((ArrayNode) list.get("items")).add(edited);

    Map<String, KstatusProgram.Line> verdicts = kstatus.compute(JSON.writeValueAsString(list));

    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("scheduled", "Current");
    expected.put("suspended", "Current");
    expected.put("running", "InProgress");
    expected.put("fired", "Current");
    expected.put("succeeded", "Current");
    expected.put("failed", "Failed");
    expected.put("missed", "Failed");
    expected.put("invalid", "Failed");
    expected.put("edited", "InProgress");
    Map<String, String> actual =
        verdicts.entrySet().stream()
            .collect(
                Collectors.toMap(
                    e -> e.getKey().substring(e.getKey().indexOf('/') + 1),
                    e -> e.getValue().status(),
                    (a, b) -> a,
                    LinkedHashMap::new));
    assertThat(actual)
        .as("kstatus of each task: %s", verdicts)
        .containsExactlyInAnyOrderEntriesOf(expected);

    // kstatus passes the operator's reason on: a failed task says why, where Flux shows it.
    assertThat(verdicts.get(NS + "/invalid").message())
        .contains("spec.jobTemplate.metadata.namespace");
    assertThat(verdicts.get(NS + "/failed").message()).contains("backoff limit");
    assertThat(verdicts.get(NS + "/edited").message()).contains("generation");
  }

  private static io.delayedtask.operator.api.v1alpha1.DelayedTask awaitPhase(
      String name, Phase phase) {
    await().atMost(TIMEOUT).until(() -> phase(client, NS, name).orElse(null) == phase);
    return get(client, NS, name);
  }

  private static Job job(io.delayedtask.operator.api.v1alpha1.DelayedTask task) {
    return client.batch().v1().jobs().inNamespace(NS).withName(task.getStatus().getJobName()).get();
  }

  private static ObjectNode findItem(JsonNode list, String name) {
    for (JsonNode item : list.get("items")) {
      if (name.equals(item.get("metadata").get("name").asText())) {
        return (ObjectNode) item;
      }
    }
    throw new AssertionError("no task " + name + " in " + list);
  }
}
