package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.statusOnly;
import static io.delayedtask.operator.testing.Tasks.withJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.TaskLabels;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator fails closed without the admission policy, on a real API server: with the shipped
 * policies (k8s/15-admission-policy.yaml) deleted, a due task with a jobTemplate creates no Job and
 * one with a sink.audience sends nothing (so no token), nor one with sink.signing (so nothing is
 * signed); they stay Scheduled with Ready=False AdmissionPolicyMissing, a Warning Event and
 * delayedtask_admission_policy_present 0, while a status-only task fires and one past its
 * startingDeadlineSeconds is Missed. Once the policies are applied again, all fire within 30 s.
 *
 * <p>A server of its own: the policies are cluster-wide, and deleting them must not touch other
 * tests. The operator runs in-process as the admin (system:masters, which the status policy admits),
 * with the check on for the plain manifests' bindings, and without leader election.
 */
@RequiresRealKubernetes
class AdmissionPolicyMissingIT {
  private static final Path POLICY = Manifests.PLAIN.resolve("15-admission-policy.yaml");
  private static final String PRESENT = "delayedtask_admission_policy_present";
  private static final Duration RETURN_BOUND = Duration.ofSeconds(30);

  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static Receiver receiver;
  private static OperatorFixture.OnRealKubernetes world;
  private static String ns;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.startDedicated();
    client = kube.client();
    apply(POLICY);
    receiver = Receiver.start();
    // One instance, without leader election: a lease lost on a busy machine is not this test's subject.
    world = OperatorFixture.startOnRealKubernetes(kube, "admission", Map.of(
        OperatorConfig.LEADER_ELECTION, "false",
        OperatorConfig.ADMISSION_POLICY, String.join(",", OperatorConfig.DEFAULT_ADMISSION_POLICY_BINDINGS),
        SinkConfig.ALLOWED_URIS, "http://localhost:" + receiver.port() + ",http://127.0.0.1:" + receiver.port()));
    ns = world.namespace();
    // The sink: the sender ServiceAccount, and a Service naming this host's receiver.
    client.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder().withNewMetadata()
        .withName(SinkConfig.defaults().serviceAccount()).endMetadata().build()).create();
    client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName("orders").endMetadata()
        .withNewSpec().withType("ExternalName").withExternalName("localhost")
        .addNewPort().withName("http").withPort(receiver.port()).endPort().endSpec().build()).create();
    client.secrets().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.SecretBuilder().withNewMetadata()
        .withName(SinkConfig.DEFAULT_SIGNING_SECRET).endMetadata()
        .withStringData(Map.of("orders", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).build()).create();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
    if (receiver != null) {
      receiver.close();
    }
    if (kube != null) {
      kube.close();
    }
  }

  @Test
  void withThePolicyDeletedJobAndTokenTasksWaitWhileAStatusOnlyTaskFiresAndTheyFireWithin30sOfItsReturn() {
    int port = world.operator().httpPort();
    await("the policy is seen in place").atMost(Duration.ofSeconds(30))
        .until(() -> OperatorHttp.metric(port, PRESENT, "") == 1.0);

    RealKubernetes.Kubectl.Result deleted = kube.kubectl("delete", "-f", POLICY.toString());
    assertThat(deleted.ok()).as(deleted.output()).isTrue();
    await("the operator sees it gone").atMost(Duration.ofSeconds(30))
        .until(() -> OperatorHttp.metric(port, PRESENT, "") == 0.0);

    Instant now = Instant.now();
    create(client, withJob(ns, "job", now));
    create(client, withAudience("token", now));
    DelayedTask signed = withAudience("signed", now);
    signed.getSpec().getSink().setAudience(null);
    signed.getSpec().getSink().setUri("/signed");
    signed.getSpec().getSink().setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("orders"));
    create(client, signed);
    create(client, statusOnly(ns, "status-only", now));
    DelayedTask late = withJob(ns, "deadline", now);
    late.getSpec().setStartingDeadlineSeconds(3L);
    create(client, late);

    await("a status-only task fires as usual").atMost(Duration.ofSeconds(30))
        .until(() -> phase(client, ns, "status-only").orElse(null) == Phase.Fired);
    for (String name : new String[] {"job", "token", "signed"}) {
      await(name + " waits, not ready, saying why").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        DelayedTask task = get(client, ns, name);
        assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Scheduled);
        Condition ready = task.getStatus().getConditions().stream()
            .filter(c -> Condition.READY.equals(c.getType())).findFirst().orElseThrow();
        assertThat(ready.getStatus()).isEqualTo("False");
        assertThat(ready.getReason()).isEqualTo("AdmissionPolicyMissing");
        assertThat(ready.getMessage()).contains("delayed-task-operator-author-rights is missing",
            "kubectl apply -f k8s/15-admission-policy.yaml");
        assertThat(Events.count(client, ns, name, "AdmissionPolicyMissing")).isGreaterThanOrEqualTo(1);
      });
    }
    assertThat(Events.count(client, ns, "job", "AdmissionPolicyMissing")).isEqualTo(1);
    // Through at least one recheck: still no Job, and nothing reached the receiver (so no token).
    await("nothing is created or sent while the policy is missing").during(Duration.ofSeconds(12))
        .atMost(Duration.ofSeconds(20)).until(() -> jobsOf("job") == 0 && receiver.requests().isEmpty()
            && phase(client, ns, "job").orElse(null) == Phase.Scheduled);
    await("its startingDeadlineSeconds still counts").atMost(Duration.ofSeconds(30))
        .until(() -> phase(client, ns, "deadline").orElse(null) == Phase.Missed);
    assertThat(jobsOf("deadline")).isZero();

    apply(POLICY);
    Instant restored = Instant.now();
    await("the Job task fires within 30 s of the policy's return").atMost(RETURN_BOUND)
        .until(() -> jobsOf("job") == 1 && phase(client, ns, "job").orElse(null) != Phase.Scheduled);
    await("the token task fires within 30 s of the policy's return").atMost(RETURN_BOUND)
        .until(() -> Optional.ofNullable(get(client, ns, "token").getStatus()).map(s -> s.getFiredTime()).isPresent());
    await("the signed task fires within 30 s of the policy's return").atMost(RETURN_BOUND)
        .until(() -> receiver.requestsTo("/signed").size() == 1);
    assertThat(receiver.requestsTo("/signed").get(0).header("webhook-signature")).startsWith("v1,");
    assertThat(Duration.between(restored, Instant.now())).isLessThan(RETURN_BOUND);
    assertThat(OperatorHttp.metric(port, PRESENT, "")).isEqualTo(1.0);
    assertThat(get(client, ns, "job").getStatus().getConditions()).filteredOn(c -> Condition.READY.equals(c.getType()))
        .singleElement().satisfies(c -> assertThat(c.getReason()).isNotEqualTo("AdmissionPolicyMissing"));
  }

  private static long jobsOf(String task) {
    String uid = get(client, ns, task).getMetadata().getUid();
    return client.batch().v1().jobs().inNamespace(ns).withLabel(TaskLabels.TASK_UID, uid).list().getItems().size();
  }

  private static DelayedTask withAudience(String name, Instant runAt) {
    return Tasks.task(ns, name, spec -> {
      spec.setRunAt(rfc3339(runAt));
      Destination sink = new Destination();
      sink.setRef(new ServiceReference("v1", "Service", "orders"));
      sink.setUri("/authenticated");
      sink.setAudience("orders");
      spec.setSink(sink);
    });
  }

  private static void apply(Path manifest) {
    RealKubernetes.Kubectl.Result applied = kube.kubectl("apply", "-f", manifest.toString());
    assertThat(applied.ok()).as(applied.output()).isTrue();
  }
}
